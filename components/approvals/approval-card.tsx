"use client";

import type { ApprovalPreview } from "@/lib/gateway";
import { requestPhrase, requestTitle } from "@/lib/approvals/words";
import { argumentWords } from "@/components/ui/words";
import { Money } from "@/components/ui/money";
import { isUpstreamPreview } from "@/lib/upstream/calls/preview";
import { TimeAgo } from "@/components/ui/time-ago";
import { amountOf, movesMoney, refundableNowOf, type CardProps } from "./card-item";
import { CardActions, CardWho } from "./card-who";
import { HeldReasons } from "./held-reasons";
import { UpstreamCard } from "./upstream-card";

// What approving above the step-up amount will ask of this viewer.
const STEP_UP_ASKS: Record<CardProps["way"]["with"], string> = {
  passkey: "approving asks for one touch of your passkey.",
  password: "approving asks for your password again (a passkey, once you add one under Settings).",
  "passkey-needed": "approving needs a passkey, not your password: add one under Settings.",
};

export function ApprovalCard(props: CardProps) {
  const { preview } = props.item;
  if (isUpstreamPreview(preview)) return <UpstreamCard {...props} preview={preview} />;
  return <RefundCard {...props} preview={preview} />;
}

function RefundCard({
  item,
  preview,
  policy,
  way,
  me,
  now,
  focused,
  selected,
  busy,
  onFocus,
  onToggle,
  onApprove,
  onDeny,
}: CardProps & { preview: ApprovalPreview }) {
  const { facts } = item;
  const currency = preview.impact.currency;
  const money = (cents: number) => <Money cents={cents} currency={currency} />;
  const expired = now !== null && new Date(item.expiresAt).getTime() <= now;
  const amount = amountOf(item);
  const twoPerson = movesMoney(item) && amount > policy.twoPersonAboveCents;
  const iApprovedFirst = facts.firstApprover?.email === me;
  const checked = preview.order;
  const current = facts.orderNow;
  const changed = current !== null && current.version !== checked.version;
  const refundable = refundableNowOf(item) ?? 0;
  // Refunds waiting together on one order may ask more than it has left: approving one can leave another unpayable.
  const askedTogether = movesMoney(item)
    ? facts.siblings.reduce((sum, other) => sum + (other.toolName === item.toolName ? other.impactCents : 0), amount)
    : 0;
  const overAsked = amount <= refundable && askedTogether > refundable;
  return (
    <section
      id={`request-${item.id}`}
      className={`card approval${focused ? " focused" : ""}`}
      data-testid="approval-item"
      data-approval-id={item.id}
      tabIndex={-1}
      onFocus={onFocus}
      aria-label={`${requestPhrase({ toolName: item.toolName, orderId: item.orderId, amountCents: amount, currency })}`}
    >
      <header className="card-head">
        <h2 data-testid="card-title">
          {requestTitle({ toolName: item.toolName, amountCents: amount, currency })}{" "}
          <span className="muted">on {item.orderId}</span>
        </h2>
        <label className="select">
          <input
            type="checkbox"
            checked={selected}
            onChange={onToggle}
            aria-label={`select ${requestPhrase({ toolName: item.toolName, orderId: item.orderId, amountCents: amount, currency })}`}
          />{" "}
          select
        </label>
      </header>
      <CardWho item={item} customerId={preview.customer_id} now={now} />
      <div className="why" data-testid="card-why">
        <strong>Held because</strong>{" "}
        {(preview.held ?? []).length === 0 ? (
          <span>this call needs a supervisor&apos;s approval</span>
        ) : (
          <HeldReasons reasons={preview.held} currency={currency} />
        )}
      </div>
      <dl className="facts">
        <dt>Details</dt>
        <dd data-testid="preview-arguments">
          {argumentWords(preview.arguments)
            .filter(({ key }) => key !== "order_id")
            .sort((a, b) => a.key.localeCompare(b.key))
            .map(({ label, value }) => `${label}: ${value}`)
            .join(" · ")}
        </dd>
        <dt>Order {changed ? "when checked" : ""}</dt>
        <dd data-testid="preview-order">
          {checked.status} · total {money(checked.total_cents)} · refunded {money(checked.refunded_cents)} · refundable{" "}
          {money(checked.refundable_cents)}
        </dd>
        {changed && current && (
          <>
            <dt className="warn">Order now</dt>
            <dd data-testid="order-now" className="warn">
              {current.status}
              {current.fraudHold ? " · fraud hold" : ""}
              {current.refundPending ? " · a refund is settling" : ""} · refunded {money(current.refundedCents)} ·
              refundable {money(refundable)} (changed since it was checked)
            </dd>
          </>
        )}
        <dt>Refunds on this order</dt>
        <dd data-testid="order-refunds">
          {facts.refunds.length === 0
            ? "none yet"
            : facts.refunds.map((refund, index) => (
                <span key={refund.id}>
                  {index > 0 && "; "}
                  <Money cents={refund.amountCents} currency={refund.currency} /> {refund.status}{" "}
                  <TimeAgo iso={refund.createdAt} />
                </span>
              ))}
        </dd>
        {facts.siblings.length > 0 && (
          <>
            <dt className="warn">Also pending on {item.orderId}</dt>
            <dd data-testid="card-siblings" className="warn">
              {facts.siblings.map((sibling, index) => (
                <span key={sibling.id}>
                  {index > 0 && "; "}
                  <a href={`#request-${sibling.id}`}>
                    {requestPhrase({
                      toolName: sibling.toolName,
                      orderId: null,
                      amountCents: sibling.impactCents,
                      currency,
                    })}
                  </a>{" "}
                  asked by {sibling.requester ?? "an agent"} <TimeAgo iso={sibling.createdAt} />
                </span>
              ))}
              {facts.moreSiblings > 0 &&
                ` and ${facts.moreSiblingsCapped ? "over " : ""}${facts.moreSiblings.toLocaleString("en")} more`}
              {overAsked && (
                <strong className="line" data-testid="card-over-asked">
                  Together they ask {facts.moreSiblings > 0 ? "at least " : ""}
                  {money(askedTogether)} and the order has {money(refundable)} refundable: not all of them can be paid.
                </strong>
              )}
            </dd>
          </>
        )}
      </dl>
      {movesMoney(item) && amount > policy.stepUpAboveCents && (
        <p className="muted" data-testid="card-step-up">
          Above {money(policy.stepUpAboveCents)}: {STEP_UP_ASKS[way.with]}
        </p>
      )}
      {twoPerson && (
        <p className="notice" data-testid="card-two-person">
          Above {money(policy.twoPersonAboveCents)}: two supervisors must approve.{" "}
          {facts.firstApprover ? (
            <>
              Approved by {facts.firstApprover.name} ({facts.firstApprover.email}){" "}
              <TimeAgo iso={facts.firstApprover.at} />; waiting for a second supervisor.
            </>
          ) : (
            "No approval yet."
          )}
        </p>
      )}
      <CardActions
        item={item}
        approveDisabled={busy || expired || iApprovedFirst}
        denyDisabled={busy || expired}
        onApprove={onApprove}
        onDeny={onDeny}
      />
    </section>
  );
}
