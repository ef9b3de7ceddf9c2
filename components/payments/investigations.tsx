"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { resolveInvestigationAction } from "@/lib/payments/reconcile/actions";
import { Money } from "@/components/ui/money";
import { TimeAgo } from "@/components/ui/time-ago";
import { useStepUp } from "@/components/step-up/step-up-field";
import { BusyButton } from "@/components/ui/busy-button";
import { count } from "@/lib/words";

export interface Investigation {
  id: string;
  orderId: string;
  amountCents: number;
  currency: string;
  providerKey: string;
  lastError: string | null;
  attempts: number;
  createdAt: string;
}

export interface ReconcileHealth {
  ok: boolean;
  reason: string | null;
  checkedAt: string;
  lastOkAt: string | null;
}

function Resolve({ item, hasPasskey }: { item: Investigation; hasPasskey: boolean }) {
  const router = useRouter();
  const stepUp = useStepUp(hasPasskey);
  const [reference, setReference] = useState("");
  const [note, setNote] = useState("");
  const [message, setMessage] = useState<{ error: boolean; text: string } | null>(null);
  const [pending, startTransition] = useTransition();

  function resolve(
    input: { resolution: "issued"; providerRefundId: string } | { resolution: "released"; note: string },
  ) {
    startTransition(async () => {
      // Releasing lets the order be refunded again, so it asks for the supervisor's step-up.
      const result =
        input.resolution === "released"
          ? await stepUp.run({ kind: "investigation.release", refundId: item.id }, (proofId) =>
              resolveInvestigationAction({ refundId: item.id, ...input, proofId }),
            )
          : await resolveInvestigationAction({ refundId: item.id, ...input });
      setMessage(
        result.ok
          ? { error: false, text: `Closed: the call is now ${result.data.outcome.code}.` }
          : { error: true, text: result.message },
      );
      if (result.ok) router.refresh();
    });
  }

  return (
    <div className="resolve">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          resolve({ resolution: "issued", providerRefundId: reference });
        }}
      >
        <label>
          Provider refund reference
          <input
            name="providerRefundId"
            value={reference}
            onChange={(event) => setReference(event.target.value)}
            placeholder="re_..."
            required
            minLength={3}
            maxLength={100}
          />
        </label>{" "}
        <BusyButton type="submit" busy={pending} disabled={reference.trim().length < 3}>
          Close as issued
        </BusyButton>
      </form>
      <form
        style={{ marginTop: "0.5rem" }}
        onSubmit={(event) => {
          event.preventDefault();
          resolve({ resolution: "released", note });
        }}
      >
        <label>
          Why nothing was refunded
          <input
            name="note"
            value={note}
            onChange={(event) => setNote(event.target.value)}
            required
            minLength={3}
            maxLength={500}
          />
        </label>{" "}
        <BusyButton type="submit" className="danger" busy={pending} disabled={note.trim().length < 3}>
          Release
        </BusyButton>
        {stepUp.field}
      </form>
      {message && (
        <p className={message.error ? "error" : "muted"} role={message.error ? "alert" : "status"}>
          {message.text}
        </p>
      )}
    </div>
  );
}

/**
 * Refunds whose outcome the provider could not confirm: each order stays blocked until a supervisor closes the
 * investigation. Above them, whether reconciliation can reach the provider at all.
 */
export function Investigations({
  items,
  health,
  hasPasskey,
}: {
  items: Investigation[];
  health: ReconcileHealth | null;
  hasPasskey: boolean;
}) {
  const paused = health !== null && !health.ok;
  if (items.length === 0 && !paused) return null;
  return (
    <section className="card" data-testid="investigations">
      <h2 style={{ marginTop: 0 }}>Needs investigation</h2>
      {paused && (
        <p className="error" role="alert" data-testid="reconcile-paused">
          Reconciliation is paused: the payment provider could not be reached as configured ({health.reason}). Checked{" "}
          <TimeAgo iso={health.checkedAt} />
          {health.lastOkAt ? (
            <>
              , last reached <TimeAgo iso={health.lastOkAt} />
            </>
          ) : null}
          . Nothing is settled, released or sent again until the provider&apos;s address and secret are fixed.
        </p>
      )}
      {items.length > 0 && (
        <>
          <p className="muted">
            The payment provider has not confirmed these refunds, and nothing will be sent again on its own. Look each
            key up at the provider, then close it: issued with the provider&apos;s refund reference, or released with a
            note. Each order stays blocked for new refunds until then.
          </p>
          {items.map((item) => (
            <div key={item.id} className="card" data-testid="investigation" data-refund-id={item.id}>
              <p>
                <strong>
                  <Money cents={item.amountCents} currency={item.currency} />
                </strong>{" "}
                on order <code>{item.orderId}</code>, reserved <TimeAgo iso={item.createdAt} />
              </p>
              <p className="muted">
                Provider key <code style={{ overflowWrap: "anywhere" }}>{item.providerKey}</code> ·{" "}
                {count(item.attempts, "attempt")}
                {item.lastError ? ` · last: ${item.lastError}` : ""}
              </p>
              <Resolve item={item} hasPasskey={hasPasskey} />
            </div>
          ))}
        </>
      )}
    </section>
  );
}
