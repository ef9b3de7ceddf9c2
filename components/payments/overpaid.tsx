"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { closeOverpaidAction } from "@/lib/payments/reconcile/actions";
import { Money } from "@/components/ui/money";
import { TimeAgo } from "@/components/ui/time-ago";
import { BusyButton } from "@/components/ui/busy-button";
import { useStepUp } from "@/components/step-up/step-up-field";

export interface OverpaidRefund {
  id: string;
  orderId: string;
  amountCents: number;
  currency: string;
  providerRefundId: string | null;
  overpaidCents: number | null;
  overpaidAt: string;
}

function Close({ refund, hasPasskey }: { refund: OverpaidRefund; hasPasskey: boolean }) {
  const router = useRouter();
  const stepUp = useStepUp(hasPasskey);
  const [note, setNote] = useState("");
  const [message, setMessage] = useState<{ error: boolean; text: string } | null>(null);
  const [pending, startTransition] = useTransition();
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        startTransition(async () => {
          // Closing clears the listing and its alert, so it asks for the supervisor's step-up.
          const result = await stepUp.run({ kind: "overpaid.close", refundId: refund.id }, (proofId) =>
            closeOverpaidAction({ refundId: refund.id, note, proofId }),
          );
          setMessage(result.ok ? { error: false, text: "Noted and closed." } : { error: true, text: result.message });
          if (result.ok) router.refresh();
        });
      }}
    >
      <label>
        What was done with the customer
        <input
          name="note"
          value={note}
          onChange={(event) => setNote(event.target.value)}
          required
          minLength={3}
          maxLength={500}
        />
      </label>{" "}
      <BusyButton type="submit" busy={pending} disabled={note.trim().length < 3}>
        Close
      </BusyButton>
      {stepUp.field}
      {message && (
        <p className={message.error ? "error" : "muted"} role={message.error ? "alert" : "status"}>
          {message.text}
        </p>
      )}
    </form>
  );
}

/**
 * Refunds the payment provider made after toolgate had released them, when their order had been refunded again
 * meanwhile: the customer received more than the order's total, which the order's refunded total cannot show
 * (decision 031).
 */
export function OverpaidRefunds({ refunds, hasPasskey }: { refunds: OverpaidRefund[]; hasPasskey: boolean }) {
  if (refunds.length === 0) return null;
  return (
    <section className="card" aria-labelledby="overpaid" data-testid="overpaid">
      <h2 id="overpaid" style={{ marginTop: 0 }}>
        Refunded past the order&apos;s total
      </h2>
      <p className="muted">
        The payment provider made these refunds after toolgate had released them (their requests reached it late), and
        each order had been refunded again meanwhile. They now count as issued, and each customer received more than
        their order&apos;s total. Settle the difference with the customer, then note what you did.
      </p>
      {refunds.map((refund) => (
        <div key={refund.id} className="card" data-testid="overpaid-refund" data-refund-id={refund.id}>
          <p>
            <strong>
              <Money cents={refund.overpaidCents ?? 0} currency={refund.currency} />
            </strong>{" "}
            paid beyond the total of order <code>{refund.orderId}</code>: its refund of{" "}
            <Money cents={refund.amountCents} currency={refund.currency} /> was made as{" "}
            <code style={{ overflowWrap: "anywhere" }}>{refund.providerRefundId}</code>, found{" "}
            <TimeAgo iso={refund.overpaidAt} />
          </p>
          <Close refund={refund} hasPasskey={hasPasskey} />
        </div>
      ))}
    </section>
  );
}
