"use client";

import { useEffect, useRef, useState } from "react";
import { decideApprovalsAction } from "@/lib/approvals/decision/actions";
import type { DeskPolicy } from "@/lib/approvals/desk/cards";
import type { DecisionResult } from "@/lib/approvals/decision/types";
import { requestPhrase } from "@/lib/approvals/words";
import { formatMoney } from "@/lib/money";
import { FormMessages } from "@/components/ui/field";
import { AmountToRefund, loweredAmount } from "./amount-field";
import { amountOf, currencyOf, movesMoney, refundableNowOf, type CardItem } from "./card-item";
import { DenyReason, reasonProblem } from "./deny-reason";
import { proveStepUp } from "@/components/step-up/step-up";
import { PasskeyNeeded, PasswordProof } from "@/components/step-up/step-up-field";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";
import { BusyButton } from "@/components/ui/busy-button";

interface Props {
  mode: "approve" | "deny";
  items: CardItem[];
  policy: DeskPolicy;
  /** How the approver proves a step-up in this session (`stepUpWayOf`). */
  way: StepUpWay;
  onDone(results: DecisionResult[]): void;
  onClose(): void;
}

/** "60.00 USD refund on ord_1002 (lowered from 80.00 USD)" while the approver lowers what the card asks. */
const phraseOf = (item: CardItem, approvedCents: number) =>
  requestPhrase({
    toolName: item.toolName,
    orderId: item.orderId,
    amountCents: amountOf(item),
    approvedCents,
    currency: currencyOf(item),
  });

/** Confirms a decision: restates what moves and to whom, narrows one refund's amount, takes the step-up, or asks why it is denied. */
export function DecideDialog({ mode, items, policy, way, onDone, onClose }: Props) {
  const hasPasskey = way.with === "passkey";
  const dialog = useRef<HTMLDialogElement>(null);
  const single = items.length === 1 ? items[0] : null;
  const editable = mode === "approve" && single !== null && movesMoney(single);
  // A refund larger than what its order has left would be stopped by the re-check: the field starts at what is left
  // and takes no more.
  const refundable = editable && single ? refundableNowOf(single) : null;
  const short = refundable !== null && single !== null && refundable < amountOf(single) ? refundable : null;
  const maxCents = single ? (short !== null && short > 0 ? short : amountOf(single)) : 0;
  const [amount, setAmount] = useState(single ? (maxCents / 100).toFixed(2) : "");
  const [reason, setReason] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const element = dialog.current;
    element?.showModal();
    return () => element?.close();
  }, []);

  const currency = items[0] ? currencyOf(items[0]) : "USD";
  // Only an amount the approval may take (0.01 up to the proposal) changes what the dialog says and signs; confirm()
  // says what is wrong with any other.
  const lowered = editable && single ? loweredAmount(amount, maxCents, currency) : null;
  const cents = lowered?.cents ?? null;
  const approvedCents = (item: CardItem) => (item === single && cents !== null ? cents : amountOf(item));
  const stepUp =
    mode === "approve" && items.some((item) => movesMoney(item) && approvedCents(item) > policy.stepUpAboveCents);
  // A tenant that requires single sign-on takes no password: the approver is told so before typing one.
  const passkeyNeeded = stepUp && way.with === "passkey-needed";
  // A batch may hold orders in several currencies: each is totalled apart ("80.00 USD + 50.00 EUR"), never added up.
  // Each order is totalled too, since requests that together ask more than it has left stop at their re-check.
  const totals = new Map<string, number>();
  const orders = new Map<string, { asked: number; left: number; currency: string }>();
  for (const item of items.filter(movesMoney)) {
    totals.set(currencyOf(item), (totals.get(currencyOf(item)) ?? 0) + approvedCents(item));
    const left = refundableNowOf(item);
    if (left === null) continue;
    const order = orders.get(item.orderId) ?? { asked: 0, left, currency: currencyOf(item) };
    orders.set(item.orderId, { ...order, asked: order.asked + approvedCents(item) });
  }
  const total = [...totals].map(([code, sum]) => formatMoney(sum, code)).join(" + ");
  const overdrawn = mode === "approve" ? [...orders].filter(([, order]) => order.asked > order.left) : [];

  async function confirm() {
    setError(null);
    const problem = mode === "deny" ? reasonProblem(reason) : null;
    if (problem) return setError(problem);
    if (lowered?.problem) return setError(lowered.problem);
    setBusy(true);
    try {
      const ids = items.map((item) => item.id);
      let proofId: string | undefined;
      if (stepUp) {
        // One proof for the whole decision: the challenge carries each request with the amount approved.
        const purpose = {
          kind: "approve" as const,
          items: items.map((item) => ({ id: item.id, cents: movesMoney(item) ? approvedCents(item) : 0 })),
        };
        const proved = await proveStepUp(purpose, hasPasskey ? { passkey: true } : { passkey: false, password });
        if (!proved.ok) return setError(proved.message);
        proofId = proved.proofId;
      }
      const edit =
        editable && single && cents !== null && cents !== amountOf(single)
          ? { tool: single.toolName, arguments: { ...single.preview.arguments, amount_cents: cents } }
          : undefined;
      const response =
        mode === "approve"
          ? await decideApprovalsAction({ decision: "approve", ids, edit, proofId })
          : await decideApprovalsAction({ decision: "deny", ids, reason });
      if (!response.ok) return setError(response.message);
      onDone(response.data);
    } finally {
      setBusy(false);
    }
  }

  return (
    <dialog
      ref={dialog}
      className="decide"
      aria-labelledby="decide-title"
      onCancel={onClose}
      data-testid="decide-dialog"
    >
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          void confirm();
        }}
      >
        <h2 id="decide-title">
          {mode === "approve" ? "Approve" : "Deny"}{" "}
          {single ? phraseOf(single, approvedCents(single)) : `${items.length} requests`}?
        </h2>
        <ul className="restate" data-testid="decide-restate">
          {items.map((item) => (
            <li key={item.id}>
              {phraseOf(item, approvedCents(item))} for {item.facts.customer?.email ?? item.preview.customer_id}
            </li>
          ))}
        </ul>
        {mode === "approve" && totals.size > 0 && items.length > 1 && <p>Total: {total}</p>}
        {overdrawn.map(([orderId, order]) => (
          <p key={orderId} className="notice" data-testid="decide-overdrawn">
            Together they ask {formatMoney(order.asked, order.currency)} of {orderId}, which has{" "}
            {formatMoney(order.left, order.currency)} refundable now: the re-check stops what does not fit, and it is
            not executed.
          </p>
        ))}
        {short !== null && single && (
          <p className="notice" data-testid="decide-short">
            {short > 0
              ? `Only ${formatMoney(short, currency)} of ${single.orderId} is refundable now, so the amount starts there: the proposed ${formatMoney(amountOf(single), currency)} would be stopped by its re-check.`
              : `${single.orderId} has nothing left to refund now: an approval would be stopped by its re-check. Deny it instead.`}
          </p>
        )}
        {editable && single && (
          <AmountToRefund
            currency={currency}
            maxCents={maxCents}
            value={amount}
            onChange={(value) => {
              setAmount(value);
              setError(null);
            }}
          />
        )}
        {mode === "deny" && (
          <DenyReason label="Reason (the agent reads it)" value={reason} onChange={setReason} rows={3} autoFocus />
        )}
        {stepUp &&
          (hasPasskey ? (
            <p className="notice" data-testid="step-up-passkey">
              Above {formatMoney(policy.stepUpAboveCents, currency)}: one touch of your passkey signs this decision
              {items.length > 1 ? ` (${items.length} requests, ${total} in total)` : ""}.
            </p>
          ) : way.with === "passkey-needed" ? (
            <PasskeyNeeded
              way={way}
              before={`Above ${formatMoney(policy.stepUpAboveCents, currency)}`}
              then="approve here"
              testId="step-up-passkey-needed"
            />
          ) : (
            <PasswordProof
              value={password}
              onChange={setPassword}
              before={`Above ${formatMoney(policy.stepUpAboveCents, currency)}`}
            />
          ))}
        <FormMessages error={error} />
        <p className="actions">
          <BusyButton
            type="submit"
            className={mode === "approve" ? "primary" : "danger"}
            busy={busy}
            disabled={passkeyNeeded}
          >
            {mode === "approve"
              ? stepUp && hasPasskey
                ? "Confirm with passkey and approve"
                : "Confirm approval"
              : "Deny"}
          </BusyButton>{" "}
          <BusyButton type="button" onClick={onClose} busy={busy}>
            Cancel
          </BusyButton>
        </p>
      </form>
    </dialog>
  );
}
