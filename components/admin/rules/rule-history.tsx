"use client";

import { useState, useTransition } from "react";
import { RuleDiff } from "@/components/admin/rules/rule-diff";
import { rulesDigest } from "@/components/admin/rules/rules-digest";
import { useStepUp } from "@/components/step-up/step-up-field";
import { TimeAgo } from "@/components/ui/time-ago";
import { compareVersionsAction, rollbackRulesAction } from "@/lib/admin/rules/actions";
import type { DiffLine } from "@/lib/line-diff";
import { BusyButton } from "@/components/ui/busy-button";
import { count } from "@/lib/words";
import { type Said, saidOf } from "@/components/ui/field";

interface Version {
  id: string;
  version: number;
  status: string;
  text: string;
  cases: number;
  author: string;
  createdAt: string;
  changeId: string | null;
  approvedBy: string | null;
  restoresVersion: number | null;
  rules: number;
  inForce: string | null;
}

/**
 * How a version came to be, in words: published at once, approved by a second admin, or applied when its delay
 * passed with no one cancelling it (a tenant with one admin); and what it restores.
 */
function provenance(version: Version): string {
  const made = !version.changeId
    ? "applied at once"
    : version.approvedBy
      ? `approved by ${version.approvedBy} (change ${version.changeId})`
      : `applied when its delay passed, no one having cancelled it (change ${version.changeId})`;
  return version.restoresVersion === null ? made : `${made}; a rollback to version ${version.restoresVersion}`;
}

/**
 * Every version as it was published: its full text, author, time and the change that made it; any two compared
 * line by line; any one rolled back to (published live again as a new version, classified like any publish).
 */
export function RuleHistory({ history, hasPasskey }: { history: Version[]; hasPasskey: boolean }) {
  const stepUp = useStepUp(hasPasskey);
  const [from, setFrom] = useState(history[1]?.version ?? history[0]?.version ?? 1);
  const [to, setTo] = useState(history[0]?.version ?? 1);
  const [diff, setDiff] = useState<{ from: number; to: number; lines: DiffLine[] } | null>(null);
  const [message, setMessage] = useState<Said>(null);
  const [pending, startTransition] = useTransition();

  function compare() {
    startTransition(async () => {
      setMessage(null);
      const response = await compareVersionsAction({ from, to });
      if (!response.ok) return setMessage({ ok: false, text: response.message });
      setDiff(response.data);
    });
  }

  function rollback(version: Version) {
    startTransition(async () => {
      setMessage(null);
      const digest = await rulesDigest(version.text);
      const response = await stepUp.run({ kind: "admin.rules", digest }, (proofId) =>
        rollbackRulesAction({ version: version.version, proofId }),
      );
      setMessage(saidOf(response, (data) => data.message));
    });
  }

  const choose = (label: string, value: number, set: (version: number) => void) => (
    <label>
      {label}{" "}
      <select value={value} onChange={(event) => set(Number(event.target.value))}>
        {history.map((version) => (
          <option key={version.id} value={version.version}>
            version {version.version}
          </option>
        ))}
      </select>
    </label>
  );

  return (
    <div>
      {stepUp.field}
      {message && (
        <p role="status" className={message.ok ? "ok" : "error"} data-testid="rules-history-message">
          {message.text}
        </p>
      )}
      <div className="actions">
        {choose("Compare", from, setFrom)} {choose("with", to, setTo)}{" "}
        <BusyButton type="button" busy={pending} onClick={compare}>
          Show the differences
        </BusyButton>
      </div>
      {diff && (
        <>
          <p className="muted">
            From version {diff.from} to version {diff.to}:
          </p>
          <RuleDiff lines={diff.lines} testId="rules-version-diff" />
        </>
      )}
      <ul data-testid="rules-history">
        {history.map((version) => (
          <li key={version.id} data-testid="rules-history-row" data-version={version.version}>
            <details>
              <summary>
                Version {version.version}
                {version.inForce ? ` (${version.inForce} now)` : ""}, published as {version.status} by {version.author}{" "}
                <TimeAgo iso={version.createdAt} />: {count(version.rules, "rule")}, {count(version.cases, "test case")}
                ; {provenance(version)}
              </summary>
              <pre className="rule-diff" data-testid="rules-version-text">
                {version.text}
              </pre>
              {version.inForce !== "live" && (
                <BusyButton type="button" busy={pending} onClick={() => rollback(version)}>
                  Roll back to version {version.version}
                </BusyButton>
              )}
            </details>
          </li>
        ))}
      </ul>
    </div>
  );
}
