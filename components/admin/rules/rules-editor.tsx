"use client";

import { useState, useTransition } from "react";
import { RuleReport } from "@/components/admin/rules/rule-report";
import { useStepUp } from "@/components/step-up/step-up-field";
import { checkRulesAction, publishRulesAction, replayRulesAction } from "@/lib/admin/rules/actions";
import type { DifferenceReport } from "@/lib/policy-rules/replay";

/** The digest a publish's step-up is made for: this exact text as live rules (lib/admin/rules/publish.ts `rulesItem`). */
async function rulesDigest(text: string): Promise<string> {
  const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`live\n${text}`));
  return [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

export function RulesEditor({ initial, hasPasskey }: { initial: string; hasPasskey: boolean }) {
  const stepUp = useStepUp(hasPasskey);
  const [text, setText] = useState(initial);
  const [errors, setErrors] = useState<string[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const [summaries, setSummaries] = useState<{ id: string; text: string }[]>([]);
  const [report, setReport] = useState<DifferenceReport | null>(null);
  const [pending, startTransition] = useTransition();

  const failed = (response: { message: string; code: string }) => {
    if (response.code !== "rules.invalid") return setMessage(response.message);
    const errors = response.message.split("\n");
    // The engine names a fact it does not know in its own words; say where the known ones are listed.
    if (errors.some((error) => error.includes("not found")))
      errors.push('A rule can read only the facts listed under "What a rule can read" below.');
    setErrors(errors);
  };
  const reset = () => {
    setErrors([]);
    setMessage(null);
  };

  function check() {
    startTransition(async () => {
      reset();
      const response = await checkRulesAction({ text });
      if (!response.ok) return failed(response);
      setSummaries(response.data.summaries);
      setMessage(
        `Valid: ${response.data.summaries.length} ${response.data.summaries.length === 1 ? "rule" : "rules"}.`,
      );
    });
  }

  function publish(status: "live" | "shadow") {
    startTransition(async () => {
      reset();
      const digest = await rulesDigest(text);
      const response = await stepUp.run({ kind: "admin.rules", digest }, (proofId) =>
        publishRulesAction({ text, status, proofId }),
      );
      if (!response.ok) return failed(response);
      setMessage(response.data.message);
    });
  }

  function replay() {
    startTransition(async () => {
      reset();
      const response = await replayRulesAction({ text, days: 7 });
      if (!response.ok) return failed(response);
      setReport(response.data);
    });
  }

  return (
    <div className="card">
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
      {stepUp.field}
      <div className="actions">
        <button type="button" className="primary" disabled={pending} onClick={check}>
          Check
        </button>{" "}
        <button type="button" disabled={pending} onClick={() => publish("live")}>
          Publish live
        </button>{" "}
        <button type="button" disabled={pending} onClick={() => publish("shadow")}>
          Publish as shadow
        </button>{" "}
        <button type="button" disabled={pending} onClick={replay}>
          Replay over the last 7 days
        </button>
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
    </div>
  );
}
