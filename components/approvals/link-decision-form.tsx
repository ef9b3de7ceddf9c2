"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, useTransition } from "react";
import { decideFromLinkAction } from "@/lib/approvals/email-links/actions";
import { proveStepUp } from "@/components/step-up/step-up";
import { PasskeyNeeded, PasswordProof } from "@/components/step-up/step-up-field";
import type { DecisionResult } from "@/lib/approvals/decision/types";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";
import { requestPhrase } from "@/lib/approvals/words";
import { outcomeTitle } from "@/lib/calls/words";
import { formatMoney } from "@/lib/money";
import { AmountToRefund, loweredAmount } from "./amount-field";
import { DenyReason, reasonProblem } from "./deny-reason";
import { BusyButton } from "@/components/ui/busy-button";
import type { Said } from "@/components/ui/field";

/** What happened, in words: "80.00 USD refund on ord_1004 approved; refund issued." */
function decidedText(summary: string, result: Extract<DecisionResult, { ok: true }>): string {
  if (result.status === "partial")
    return `${summary}: your approval is recorded; a second supervisor must approve it too.`;
  if (result.status === "denied") return `${summary} denied.`;
  const done = outcomeTitle(result.outcome.code);
  return `${summary} approved${done ? `; ${done.toLowerCase()}` : ""}.`;
}

/**
 * What the step-up asks of this approver when the server says this amount needs one though the page did not (the
 * tenant's step-up amount changed after the page was opened).
 */
const STEP_UP_ASKS: Record<StepUpWay["with"], string | null> = {
  passkey: "Confirm it is you: this amount needs one touch of your passkey.",
  password: "Confirm it is you: this amount needs your password.",
  // The notice in place of the field says it.
  "passkey-needed": null,
};

/**
 * Approve or deny the one request behind an email link. Approving confirms first, restating what moves and
 * to whom, and lets a refund's amount be lowered as the desk's dialog does; above the tenant's step-up amount
 * (`stepUpAboveCents`) the same confirmation asks for the approver's passkey, or password (`way`), so one press
 * approves; denying needs a reason, which reaches the agent. Rendered also
 * once the request is closed, so the result of this page's own decision stays in view after the page refreshes.
 */
export function LinkDecisionForm({
  token,
  customer,
  open,
  way,
  stepUpAboveCents,
  request,
}: {
  token: string;
  customer: string;
  open: boolean;
  /** How this approver proves a step-up in this session (`stepUpWayOf`). */
  way: StepUpWay;
  /** The tenant's step-up amount: approving more money than this needs the approver's proof. */
  stepUpAboveCents: number;
  /** The request, with what approving it now approves (`cents`: at most this, for a refund). */
  request: {
    id: string;
    toolName: string;
    orderId: string;
    currency: string;
    arguments: Record<string, unknown>;
    cents: number;
    /** What the agent asked: an approval of less reads "(lowered from …)". */
    askedCents: number;
  };
}) {
  const router = useRouter();
  const [step, setStep] = useState<"choose" | "confirm-approve" | "step-up">("choose");
  const [amount, setAmount] = useState((request.cents / 100).toFixed(2));
  const [password, setPassword] = useState("");
  const [reason, setReason] = useState("");
  const [message, setMessage] = useState<Said>(null);
  // Said beside the amount field once a confirmation was tried with an amount the approval cannot take.
  const [amountTried, setAmountTried] = useState(false);
  const [pending, startTransition] = useTransition();
  // Focus follows the steps, as in the desk's dialog: into a confirmation (its password field when it asks for one,
  // else the form, read with what it restates), back to "Approve…" on Cancel, and to the password again after a
  // refusal; a button that disables itself while the server answers would otherwise leave focus nowhere.
  const stepForm = useRef<HTMLFormElement>(null);
  const approveButton = useRef<HTMLButtonElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);
  const [focusAgain, setFocusAgain] = useState(0);
  // What focus was last moved for: nothing on the page's first render (nor when an effect runs again unchanged).
  const focusedFor = useRef({ step, focusAgain });
  useEffect(() => {
    if (focusedFor.current.step === step && focusedFor.current.focusAgain === focusAgain) return;
    focusedFor.current = { step, focusAgain };
    if (step === "choose") approveButton.current?.focus();
    else (passwordInput.current ?? stepForm.current)?.focus();
  }, [step, focusAgain]);

  const lowerable = request.toolName === "issue_refund" && request.cents > 0;
  // Only an amount the approval may take (0.01 up to what approving approves) changes what the page says and signs.
  const lowered = lowerable ? loweredAmount(amount, request.cents, request.currency) : null;
  const chosen = lowered?.cents ?? request.cents;
  const amountProblem = lowered?.problem ?? null;
  const phrase = (cents: number) =>
    requestPhrase({ ...request, amountCents: request.askedCents, approvedCents: cents });
  // As the server decides it: only money approved above the tenant's step-up amount asks for a proof.
  const stepUp = request.cents > 0 && chosen > stepUpAboveCents;
  const above = `Above ${formatMoney(stepUpAboveCents, request.currency)}`;

  function proveThenApprove(method: { passkey: true } | { passkey: false; password: string }) {
    startTransition(async () => {
      const proved = await proveStepUp({ kind: "approve", items: [{ id: request.id, cents: chosen }] }, method);
      if (!proved.ok) {
        setMessage({ ok: false, text: proved.message });
        setFocusAgain((count) => count + 1);
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
        edit:
          decision === "approve" && chosen !== request.cents
            ? { tool: request.toolName, arguments: { ...request.arguments, amount_cents: chosen } }
            : undefined,
      });
      if (!response.ok) {
        setMessage({ ok: false, text: response.message });
        setFocusAgain((count) => count + 1);
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
        setMessage({ ok: true, text: decidedText(phrase(decision === "approve" ? chosen : request.cents), result) });
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
          ref={stepForm}
          tabIndex={-1}
          aria-label="Confirm it is you"
          onSubmit={(event) => {
            event.preventDefault();
            proveThenApprove(way.with === "passkey" ? { passkey: true } : { passkey: false, password });
          }}
        >
          {way.with === "password" ? (
            <PasswordProof value={password} onChange={setPassword} inputRef={passwordInput} />
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
              <BusyButton type="submit" className="primary" busy={pending}>
                {pending
                  ? "Approving…"
                  : way.with === "passkey"
                    ? "Confirm with passkey and approve"
                    : "Confirm approval"}
              </BusyButton>
            )}
            <BusyButton type="button" busy={pending} onClick={() => setStep("choose")}>
              Cancel
            </BusyButton>
          </div>
        </form>
      ) : step === "confirm-approve" ? (
        <form
          ref={stepForm}
          tabIndex={-1}
          aria-label="Confirm approval"
          aria-describedby="link-confirm"
          onSubmit={(event) => {
            event.preventDefault();
            if (amountProblem) setAmountTried(true);
            else if (stepUp)
              proveThenApprove(way.with === "passkey" ? { passkey: true } : { passkey: false, password });
            else decide("approve");
          }}
        >
          <p id="link-confirm" data-testid="link-confirm">
            Approve <strong>{phrase(chosen)}</strong> for <strong>{customer}</strong>? It executes now and cannot be
            undone.
          </p>
          {lowerable && (
            <AmountToRefund
              currency={request.currency}
              maxCents={request.cents}
              value={amount}
              onChange={(value) => {
                setAmount(value);
                setAmountTried(false);
                setMessage(null);
              }}
              problem={amountTried ? amountProblem : null}
            />
          )}
          {stepUp &&
            (way.with === "passkey" ? (
              <p className="notice" data-testid="step-up-passkey">
                {above}: one touch of your passkey signs this approval.
              </p>
            ) : way.with === "password" ? (
              <PasswordProof value={password} onChange={setPassword} before={above} inputRef={passwordInput} />
            ) : (
              <PasskeyNeeded way={way} before={above} then="open this link again" testId="link-passkey-needed" />
            ))}
          <div className="actions">
            {stepUp && way.with === "passkey-needed" ? null : (
              <BusyButton type="submit" className="primary" busy={pending}>
                {pending
                  ? "Approving…"
                  : stepUp && way.with === "passkey"
                    ? "Confirm with passkey and approve"
                    : "Confirm approval"}
              </BusyButton>
            )}
            <BusyButton type="button" busy={pending} onClick={() => setStep("choose")}>
              Cancel
            </BusyButton>
          </div>
        </form>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            const problem = reasonProblem(reason);
            if (problem) setMessage({ ok: false, text: problem });
            else decide("deny");
          }}
        >
          <div className="actions">
            <BusyButton
              ref={approveButton}
              type="button"
              className="primary"
              busy={pending}
              onClick={() => setStep("confirm-approve")}
            >
              Approve…
            </BusyButton>
          </div>
          <DenyReason
            label="Reason for denying (the agent reads it)"
            value={reason}
            onChange={setReason}
            rows={2}
            className="wide"
          />
          <BusyButton type="submit" className="danger" busy={pending}>
            {pending ? "Denying…" : "Deny"}
          </BusyButton>
        </form>
      )}
    </div>
  );
}
