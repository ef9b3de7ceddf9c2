"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { decideFromLinkAction } from "@/lib/approvals/link-actions";

/**
 * Approve or deny the one request behind an email link. Approving confirms first, restating what moves and
 * to whom; denying needs a reason, which reaches the agent. Rendered also once the request is closed, so the
 * result of this page's own decision stays in view after the page refreshes.
 */
export function LinkDecisionForm({ token, summary, customer, open }: { token: string; summary: string; customer: string; open: boolean }) {
  const router = useRouter();
  const [step, setStep] = useState<"choose" | "confirm-approve">("choose");
  const [reason, setReason] = useState("");
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [pending, startTransition] = useTransition();

  function decide(decision: "approve" | "deny") {
    startTransition(async () => {
      const response = await decideFromLinkAction({ token, decision, note: decision === "deny" ? reason : undefined });
      if (!response.ok) {
        setMessage({ ok: false, text: response.message });
        return;
      }
      const result = response.data;
      if (result.ok) {
        setMessage({ ok: true, text: `${summary} ${result.status === "approved" ? `approved: ${result.outcome.code}` : "denied"}.` });
      } else {
        setMessage({ ok: false, text: result.message });
      }
      setStep("choose");
      router.refresh();
    });
  }

  const result = message && (
    <p role="status" className={message.ok ? "ok" : "error"} data-testid="link-result">
      {message.text}
    </p>
  );
  if (!open) return result;
  return (
    <div className="card" data-testid="link-decision">
      {result}
      {step === "confirm-approve" ? (
        <div role="group" aria-label="Confirm approval">
          <p>
            Approve <strong>{summary}</strong> for <strong>{customer}</strong>? It executes now and cannot be undone.
          </p>
          <div className="actions">
            <button type="button" className="primary" disabled={pending} onClick={() => decide("approve")}>
              {pending ? "Approving…" : "Confirm approval"}
            </button>
            <button type="button" disabled={pending} onClick={() => setStep("choose")}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            decide("deny");
          }}
        >
          <div className="actions">
            <button type="button" className="primary" disabled={pending} onClick={() => setStep("confirm-approve")}>
              Approve…
            </button>
          </div>
          <p>
            <label>
              Reason for denying (the agent reads it)
              <br />
              <textarea name="reason" rows={2} maxLength={500} required value={reason} onChange={(event) => setReason(event.target.value)} className="wide" />
            </label>
          </p>
          <button type="submit" className="danger" disabled={pending || !reason.trim()}>
            {pending ? "Denying…" : "Deny"}
          </button>
        </form>
      )}
    </div>
  );
}
