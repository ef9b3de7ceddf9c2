"use client";

import { useState, useTransition } from "react";
import { TimeAgo } from "@/components/ui/time-ago";
import { useStepUp } from "@/components/step-up/step-up-field";
import { approveAdminChangeAction, cancelAdminChangeAction } from "@/lib/admin/changes/actions";
import { Table } from "@/components/ui/table";
import { RuleDiff } from "@/components/admin/rules/rule-diff";
import { RuleReport } from "@/components/admin/rules/rule-report";
import type { RulesReview } from "@/lib/admin/rules/publishing/review";
import { BusyButton } from "@/components/ui/busy-button";
import type { Said } from "@/components/ui/field";

interface Change {
  id: string;
  digest: string;
  mode: "second-admin" | "delay";
  proposedById: string;
  proposer: string;
  createdAt: string;
  applyAt: string | null;
  expiresAt: string;
  lines: string[];
  /** A rules change's full diff and replay (lib/admin/rules/publishing/review.ts); null for other kinds. */
  rules: RulesReview | null;
}

/** What a rules change does, in full: the diff from the live version and the calls it would decide otherwise. */
function RulesChangeReview({ review }: { review: RulesReview }) {
  return (
    <details open data-testid="pending-rules-review">
      <summary>
        The full change{" "}
        {review.baseVersion === null ? "(there were no live rules)" : `from live version ${review.baseVersion}`}
      </summary>
      <RuleDiff lines={review.diff} testId="pending-rules-diff" />
      {review.replay ? (
        <RuleReport
          report={review.replay}
          over={`recorded in the last ${review.days} days`}
          testId="pending-rules-replay"
        />
      ) : (
        <p className="error">The proposed rules cannot be replayed: {review.replayErrors.join("; ")}</p>
      )}
    </details>
  );
}

/**
 * Changes that loosen control and wait (docs/decisions/015): who proposed what (old → new), when it applies or
 * expires; a different admin may approve exactly what is shown (with their step-up), any supervisor or admin may
 * cancel.
 */
export function PendingChanges({
  changes,
  viewerId,
  canApprove,
  hasPasskey,
}: {
  changes: Change[];
  viewerId: string;
  canApprove: boolean;
  hasPasskey: boolean;
}) {
  const stepUp = useStepUp(hasPasskey);
  const [message, setMessage] = useState<Said>(null);
  const [pending, startTransition] = useTransition();
  const act = (run: () => Promise<{ ok: boolean; message?: string }>, done: string) =>
    startTransition(async () => {
      const response = await run();
      setMessage(response.ok ? { ok: true, text: done } : { ok: false, text: response.message ?? "" });
    });

  return (
    <div>
      {message && (
        <p role="status" className={message.ok ? "ok" : "error"} data-testid="pending-change-message">
          {message.text}
        </p>
      )}
      {stepUp.field}
      {changes.length === 0 ? (
        <p className="muted" data-testid="pending-changes-empty">
          Nothing waits. A change that loosens control beyond the tenant&apos;s bound appears here until another admin
          approves it or it is cancelled.
        </p>
      ) : (
        <Table
          testId="pending-changes"
          rows={changes}
          rowKey={(change) => change.id}
          rowProps={(change) => ({ "data-testid": "pending-change", "data-change-id": change.id })}
          columns={[
            {
              label: "Proposed by",
              cell: (change) => (
                <>
                  {change.proposer}
                  <div className="muted">
                    <TimeAgo iso={change.createdAt} /> · <code>{change.id}</code>
                  </div>
                </>
              ),
            },
            {
              label: "Changes",
              cell: (change) => (
                <>
                  {change.lines.map((line) => (
                    <div key={line} data-testid="pending-change-line">
                      {line}
                    </div>
                  ))}
                  {change.rules && <RulesChangeReview review={change.rules} />}
                </>
              ),
            },
            {
              label: "When",
              cell: (change) =>
                change.mode === "delay" ? (
                  <>
                    applies <TimeAgo iso={change.applyAt ?? change.expiresAt} /> unless cancelled
                  </>
                ) : (
                  <>
                    needs another admin; expires <TimeAgo iso={change.expiresAt} />
                  </>
                ),
            },
            {
              label: "Decide",
              cell: (change) => {
                const own = change.proposedById === viewerId;
                return (
                  <>
                    <div className="actions">
                      {canApprove && (
                        <BusyButton
                          type="button"
                          className="primary"
                          busy={pending}
                          disabled={own}
                          title={own ? "You proposed this; a different admin must approve it." : undefined}
                          onClick={() =>
                            act(
                              () =>
                                stepUp.run(
                                  { kind: "admin.change-approved", changeId: change.id, digest: change.digest },
                                  (proofId) =>
                                    approveAdminChangeAction({ changeId: change.id, digest: change.digest, proofId }),
                                ),
                              "Approved and applied.",
                            )
                          }
                        >
                          Approve
                        </BusyButton>
                      )}
                      <BusyButton
                        type="button"
                        className="danger"
                        busy={pending}
                        onClick={() => act(() => cancelAdminChangeAction({ changeId: change.id }), "Cancelled.")}
                      >
                        Cancel
                      </BusyButton>
                    </div>
                    {canApprove && own && (
                      <div className="muted">
                        {change.mode === "delay"
                          ? "You proposed this; it applies on its own when the delay ends unless a supervisor or admin cancels it."
                          : "You proposed this; another admin must approve it."}
                      </div>
                    )}
                  </>
                );
              },
            },
          ]}
        />
      )}
    </div>
  );
}
