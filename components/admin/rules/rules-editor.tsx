"use client";

import { useState, useTransition } from "react";
import { RuleReport } from "@/components/admin/rules/rule-report";
import { useStepUp } from "@/components/step-up/step-up-field";
import { rulesDigest } from "@/components/admin/rules/rules-digest";
import {
  checkRulesAction,
  publishRulesAction,
  replayProgressAction,
  shadowOneRuleAction,
  startReplayAction,
} from "@/lib/admin/rules/actions";
import type { CaseResult } from "@/lib/policy-rules/cases/cases";
import { REPLAY_LIMITS, type DifferenceReport } from "@/lib/policy-rules/replay/replay";
import { RULE_TEMPLATES, type RuleTemplate } from "@/lib/policy-rules/cases/templates";
import { BusyButton } from "@/components/ui/busy-button";
import { count } from "@/lib/words";

/** The editor starts from the set in force (shadow first): its text and its test cases as JSON. */
export function RulesEditor({
  initial,
  hasPasskey,
}: {
  initial: { text: string; cases: string } | null;
  hasPasskey: boolean;
}) {
  const stepUp = useStepUp(hasPasskey);
  const [text, setText] = useState(initial?.text ?? "");
  const [cases, setCases] = useState(initial?.cases ?? "[]");
  const [results, setResults] = useState<CaseResult[]>([]);
  const [errors, setErrors] = useState<string[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const [summaries, setSummaries] = useState<{ id: string; text: string }[]>([]);
  const [report, setReport] = useState<DifferenceReport | null>(null);
  /** When the last replay left older decisions unread: how many the next one may read. */
  const [replayLimit, setReplayLimit] = useState<number | null>(null);
  const [pending, startTransition] = useTransition();

  /** The checks' errors, one a line, and `effect` ("Nothing was published.") when the action would have changed something. */
  const failed = (response: { message: string; code: string }, effect?: string) => {
    if (!["rules.invalid", "rules.cases-invalid", "rules.cases-failed"].includes(response.code))
      return setMessage(response.message);
    const errors = response.message.split("\n");
    // The engine names a fact it does not know in its own words; say where the known ones are listed.
    if (errors.some((error) => error.includes("not found")))
      errors.push('A rule can read only the facts listed under "What a rule can read" below.');
    setErrors(errors);
    // What an earlier Check said of other text no longer holds.
    setSummaries([]);
    if (effect) setMessage(effect);
  };
  const reset = () => {
    setErrors([]);
    setMessage(null);
    setResults([]);
  };

  function check() {
    startTransition(async () => {
      reset();
      const response = await checkRulesAction({ text, cases });
      if (!response.ok) return failed(response);
      const { summaries, cases: ran } = response.data;
      setSummaries(summaries);
      setResults(ran);
      const passed = ran.filter((result) => result.passed).length;
      setMessage(
        `Valid: ${count(summaries.length, "rule")}.` +
          (ran.length > 0 ? ` Test cases: ${passed} of ${ran.length} pass.` : ""),
      );
    });
  }

  /** Adds a template's rule to the text and its cases to the cases, for the admin to adapt. */
  function startFrom(template: RuleTemplate) {
    reset();
    setText((current) => (current.trim() === "" ? template.text : `${current.trimEnd()}\n\n${template.text}`));
    setCases((current) => {
      let existing: unknown[] = [];
      try {
        const parsed: unknown = JSON.parse(current);
        if (Array.isArray(parsed)) existing = parsed;
      } catch {
        return current;
      }
      return JSON.stringify([...existing, ...template.cases], null, 2);
    });
    setMessage(`Added "${template.title}" with its test cases: adapt the numbers and the reason, then Check.`);
  }

  function publish(status: "live" | "shadow") {
    startTransition(async () => {
      reset();
      const digest = await rulesDigest(text);
      const response = await stepUp.run({ kind: "admin.rules", digest }, (proofId) =>
        publishRulesAction({ text, cases, status, proofId }),
      );
      if (!response.ok) return failed(response, "Nothing was published.");
      setMessage(response.data.message);
    });
  }

  /** The text, one rule, tried in shadow beside the live set (nothing to step up for: a shadow set enforces nothing). */
  function shadowOne() {
    startTransition(async () => {
      reset();
      const response = await shadowOneRuleAction({ text });
      if (!response.ok) return failed(response, "Nothing was put in shadow.");
      setMessage(response.data.message);
    });
  }

  /** Queues a replay in the job runner and follows its progress until it ends. */
  function replay(limit: number = REPLAY_LIMITS.first) {
    startTransition(async () => {
      reset();
      setReport(null);
      const started = await startReplayAction({ text, days: 7, limit });
      if (!started.ok) return failed(started);
      for (;;) {
        const progress = await replayProgressAction({ id: started.data.id });
        if (!progress.ok) return setMessage(progress.message);
        const { status, read, report: done, more, error } = progress.data;
        if (status === "failed") return setMessage(`The replay stopped: ${error}`);
        if (status === "done" && done) {
          setReport(done);
          setReplayLimit(more ? Math.min(limit * 10, REPLAY_LIMITS.max) : null);
          return setMessage(
            `Replayed ${read} recorded decisions${more ? `, the newest ${limit}: older ones remain` : ""}.`,
          );
        }
        setMessage(read === 0 ? "The replay waits for its turn…" : `Replaying: ${read} decisions read…`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    });
  }

  return (
    <div className="card">
      <div className="actions" data-testid="rule-templates">
        Add a rule from a template:{" "}
        {RULE_TEMPLATES.map((template) => (
          <BusyButton key={template.id} type="button" busy={pending} onClick={() => startFrom(template)}>
            {template.title}
          </BusyButton>
        ))}
      </div>
      <p>
        <label>
          Rule text (Cedar)
          <br />
          <textarea
            name="rules"
            rows={14}
            spellCheck={false}
            value={text}
            onChange={(event) => setText(event.target.value)}
            style={{ width: "100%", fontFamily: "monospace" }}
            aria-describedby="rules-help"
          />
        </label>
        <br />
        <span className="muted" id="rules-help">
          Each rule is a <code>forbid</code> with <code>@id(&quot;…&quot;)</code> and either{" "}
          <code>@hold(&quot;reason&quot;)</code> or <code>@deny(&quot;code&quot;)</code>. A rule can hold or refuse a
          call, never allow one the limits stop.
        </span>
      </p>
      <p>
        <label>
          Test cases (JSON)
          <br />
          <textarea
            name="cases"
            rows={8}
            spellCheck={false}
            value={cases}
            onChange={(event) => setCases(event.target.value)}
            style={{ width: "100%", fontFamily: "monospace" }}
            aria-describedby="cases-help"
          />
        </label>
        <br />
        <span className="muted" id="cases-help">
          Each case is <code>{`{"name": "…", "facts": {…}, "expect": {"verdict": "allow"}}`}</code>, or{" "}
          <code>{`{"verdict": "hold", "reason": "…"}`}</code> or <code>{`{"verdict": "deny", "code": "…"}`}</code>{" "}
          (optionally with <code>&quot;rule&quot;</code>). A case names only the facts it is about; the others read as a
          refund of 10.00 by an agent of a year, for a customer of a year, on a delivered order of 10 days, on a
          Wednesday at noon. Check runs them; a set whose cases fail is not published.
        </span>
      </p>
      {stepUp.field}
      <div className="actions">
        <BusyButton type="button" className="primary" busy={pending} onClick={check}>
          Check
        </BusyButton>{" "}
        <BusyButton type="button" busy={pending} onClick={() => publish("live")}>
          Publish live
        </BusyButton>{" "}
        <BusyButton type="button" busy={pending} onClick={() => publish("shadow")}>
          Publish as shadow
        </BusyButton>{" "}
        <BusyButton type="button" busy={pending} onClick={shadowOne}>
          Try this one rule in shadow beside the live rules
        </BusyButton>{" "}
        <BusyButton type="button" busy={pending} onClick={() => replay()}>
          Replay over the last 7 days
        </BusyButton>
      </div>
      {errors.length > 0 && (
        <ul role="alert" data-testid="rules-errors">
          {errors.map((error) => (
            <li key={error}>{error}</li>
          ))}
        </ul>
      )}
      {message && (
        <p role="status" data-testid="rules-message">
          {message}
        </p>
      )}
      {results.length > 0 && (
        <ul data-testid="rules-case-results">
          {results.map((result) => (
            <li key={result.name} className={result.passed ? "ok" : "error"} data-testid="rules-case-result">
              {result.passed ? "pass" : "FAIL"}: {result.name}
              {!result.passed && ` (expected ${result.expected}, got ${result.got})`}
            </li>
          ))}
        </ul>
      )}
      {summaries.length > 0 && (
        <ul data-testid="rules-draft-summary">
          {summaries.map((summary) => (
            <li key={summary.id}>
              <strong>{summary.id}</strong>: {summary.text}
            </li>
          ))}
        </ul>
      )}
      {report && <RuleReport report={report} over="recorded in the last 7 days" testId="replay" />}
      {report && replayLimit && (
        <BusyButton type="button" busy={pending} onClick={() => replay(replayLimit)}>
          Replay further: up to {replayLimit} decisions
        </BusyButton>
      )}
    </div>
  );
}
