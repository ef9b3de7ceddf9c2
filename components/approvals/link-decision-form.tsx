"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { decideFromLinkAction } from "@/lib/approvals/email-links/actions";
import { proveStepUp } from "@/components/step-up/step-up";
import { PasskeyNeeded, PasswordProof } from "@/components/step-up/step-up-field";
import type { DecisionResult } from "@/lib/approvals/decision/types";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";
import { outcomeTitle } from "@/lib/calls/words";

/** What happened, in words: "80.00 USD refund on ord_1004 approved; refund issued." */
function decidedText(summary: string, result: Extract<DecisionResult, { ok: true }>): string {
  if (result.status === "partial")
    return `${summary}: your approval is recorded; a second supervisor must approve it too.`;
  if (result.status === "denied") return `${summary} denied.`;
  const done = outcomeTitle(result.outcome.code);
  return `${summary} approved${done ? `; ${done.toLowerCase()}` : ""}.`;
}

/** What the step-up asks of this approver, once the server has said this amount needs one. */
const STEP_UP_ASKS: Record<StepUpWay["with"], string | null> = {
  passkey: "Confirm it is you: this amount needs one touch of your passkey.",
  password: "Confirm it is you: this amount needs your password.",
  // The notice in place of the field says it.
  "passkey-needed": null,
};

/**
 * Approve or deny the one request behind an email link. Approving confirms first, restating what moves and
 * to whom, and above the tenant's step-up amount asks for the approver's passkey, or password (`way`); denying needs
 * a reason, which reaches the agent. Rendered also once the request is closed, so the
 * result of this page's own decision stays in view after the page refreshes.
 */
export function LinkDecisionForm({
  token,
  summary,
  customer,
  open,
  way,
  approval,
}: {
  token: string;
  summary: string;
  customer: string;
  open: boolean;
  /** How this approver proves a step-up in this session (`stepUpWayOf`). */
  way: StepUpWay;
  /** The request and the amount a step-up proof signs for. */
  approval: { id: string; cents: number };
}) {
  const router = useRouter();
  const [step, setStep] = useState<"choose" | "confirm-approve" | "step-up">("choose");
  const [password, setPassword] = useState("");
  const [reason, setReason] = useState("");
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [pending, startTransition] = useTransition();

  function proveThenApprove(method: { passkey: true } | { passkey: false; password: string }) {
    startTransition(async () => {
      const proved = await proveStepUp({ kind: "approve", items: [approval] }, method);
      if (!proved.ok) {
        setMessage({ ok: false, text: proved.message });
        return;
      }
      setPassword("");
      setMessage(null);
      decide("approve", proved.proofId);
    });
  }

  function decide(decision: "approve" | "deny", proofId?: string) {
    startTransition(async () => {
      const response = await decideFromLinkAction({
        token,
        decision,
        note: decision === "deny" ? reason : undefined,
        proofId,
      });
      if (!response.ok) {
        setMessage({ ok: false, text: response.message });
        return;
      }
      const result = response.data;
      if (!result.ok && result.code === "approval.step-up-required") {
        const asks = STEP_UP_ASKS[way.with];
        setMessage(asks ? { ok: false, text: asks } : null);
        setStep("step-up");
        return;
      }
      if (result.ok) {
        setMessage({ ok: true, text: decidedText(summary, result) });
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
      {step === "step-up" ? (
        <form
          aria-label="Confirm it is you"
          onSubmit={(event) => {
            event.preventDefault();
            proveThenApprove(way.with === "passkey" ? { passkey: true } : { passkey: false, password });
          }}
        >
          {way.with === "password" ? (
            <PasswordProof value={password} onChange={setPassword} />
          ) : way.with === "passkey-needed" ? (
            <PasskeyNeeded
              way={way}
              before="This amount needs you to confirm it is you"
              then="open this link again"
              testId="link-passkey-needed"
            />
          ) : null}
          <div className="actions">
            {way.with === "passkey-needed" ? null : (
              <button type="submit" className="primary" disabled={pending}>
                {pending
                  ? "Approving…"
                  : way.with === "passkey"
                    ? "Confirm with passkey and approve"
                    : "Confirm approval"}
              </button>
            )}
            <button type="button" disabled={pending} onClick={() => setStep("choose")}>
              Cancel
            </button>
          </div>
        </form>
      ) : step === "confirm-approve" ? (
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
            if (reason.trim()) decide("deny");
            else setMessage({ ok: false, text: "Say why you deny it: the agent reads this reason." });
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
              <textarea
                name="reason"
                rows={2}
                maxLength={500}
                value={reason}
                onChange={(event) => setReason(event.target.value)}
                className="wide"
              />
            </label>
          </p>
          <button type="submit" className="danger" disabled={pending}>
            {pending ? "Denying…" : "Deny"}
          </button>
        </form>
      )}
    </div>
  );
}
