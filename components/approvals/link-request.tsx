import Link from "next/link";
import { HeldReasons } from "./held-reasons";
import { LinkDecisionForm } from "./link-decision-form";
import { Countdown, TimeAgo } from "@/components/ui/time-ago";
import { argumentWords, capitalized } from "@/components/ui/words";
import type { LinkView } from "@/lib/approvals/email-links/open";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";
import { requestPhrase } from "@/lib/approvals/words";
import { outcomeTitle } from "@/lib/calls/words";
import { formatMoney } from "@/lib/money";

const STATUS_WORDS: Record<string, string> = {
  approved: "approved",
  denied: "denied",
  failed: "stopped by its re-check",
  expired: "expired",
  withdrawn: "withdrawn by the agent",
};

/** The same, for a request the viewer decided themselves. */
const OWN_WORDS: Record<string, string> = {
  approved: "You approved it",
  denied: "You denied it",
  failed: "You approved it and its re-check stopped it",
};

/** The page an emailed approval link opens: the request in words, and approve or deny while it can still be decided. */
export function LinkRequest({
  token,
  view,
  way,
  stepUpAboveCents,
  viewerId,
}: {
  token: string;
  view: LinkView;
  way: StepUpWay;
  /** The tenant's step-up amount (`deskPolicy`). */
  stepUpAboveCents: number;
  /** The signed-in supervisor: a request they decided themselves reads "You approved it", not "Already approved by". */
  viewerId: string;
}) {
  if (!view.ok) {
    return (
      <main id="main">
        <h1>Approval request</h1>
        <p className="notice" role="alert" data-testid="link-problem">
          {view.message}
        </p>
        <p>
          <Link href="/approvals">Go to Approvals</Link>
        </p>
      </main>
    );
  }
  const { request } = view;
  // The amount approving approves: once approved, what was; while a second approver is awaited, the first one's.
  const shownCents = request.approvedCents ?? request.approvingCents;
  const decided = requestPhrase({ ...request, amountCents: request.impactCents, approvedCents: shownCents });
  const customer = request.customerEmail ?? "the customer";
  return (
    <main id="main">
      <h1 data-testid="link-title">{capitalized(decided)}</h1>
      <section className="card">
        <dl className="facts">
          <dt>Customer</dt>
          <dd>{customer}</dd>
          <dt>Order</dt>
          <dd data-testid="link-order">
            {request.orderId}: {request.orderStatus}, total {formatMoney(request.orderTotalCents, request.currency)},
            refunded {formatMoney(request.orderRefundedCents, request.currency)}, refundable{" "}
            {formatMoney(request.orderTotalCents - request.orderRefundedCents, request.currency)}
          </dd>
          {request.held.length > 0 && (
            <>
              <dt>Held because</dt>
              <dd data-testid="link-held">
                <HeldReasons reasons={request.held} currency={request.currency} />
              </dd>
            </>
          )}
          {argumentWords(request.arguments, shownCents)
            .filter(({ key }) => key !== "order_id")
            .map(({ key, label, value }) => (
              <div key={key} style={{ display: "contents" }}>
                <dt>{capitalized(label)}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          <dt>Requested by</dt>
          <dd>
            {request.requestedBy} <TimeAgo iso={request.createdAt.toISOString()} /> ·{" "}
            <Link href={`/calls/${request.originCallId}`}>timeline of the call</Link>
          </dd>
          {request.status === "pending" && request.firstApprovedBy && (
            <>
              <dt>First approval</dt>
              <dd data-testid="link-first-approval">
                {request.firstApprovedBy}
                {request.firstApprovedAt ? (
                  <>
                    {" "}
                    <TimeAgo iso={request.firstApprovedAt.toISOString()} />
                  </>
                ) : null}
                , at {formatMoney(request.approvingCents, request.currency)}; a second supervisor must approve.
              </dd>
            </>
          )}
          {request.status === "pending" && (
            <>
              <dt>Time left</dt>
              <dd>
                <Countdown expiresAt={request.expiresAt.toISOString()} />
              </dd>
            </>
          )}
        </dl>
      </section>
      <LinkDecisionForm
        token={token}
        customer={customer}
        open={view.usable}
        way={way}
        stepUpAboveCents={stepUpAboveCents}
        request={{
          id: request.id,
          toolName: request.toolName,
          orderId: request.orderId,
          currency: request.currency,
          arguments: request.arguments,
          cents: request.approvingCents,
          askedCents: request.impactCents,
        }}
      />
      {request.status !== "pending" ? (
        <p className="notice" data-testid="link-status">
          {request.decidedById === viewerId && OWN_WORDS[request.status]
            ? OWN_WORDS[request.status]
            : `Already ${STATUS_WORDS[request.status] ?? request.status}${request.decidedBy ? ` by ${request.decidedBy}` : ""}`}
          {request.decidedAt ? (
            <>
              {" "}
              <TimeAgo iso={request.decidedAt.toISOString()} />
            </>
          ) : null}
          {request.status === "denied" && request.note ? (
            <>, saying “{request.note}”</>
          ) : request.resultCode && (request.status === "approved" || request.status === "failed") ? (
            `: ${(outcomeTitle(request.resultCode) ?? request.resultCode).toLowerCase()}`
          ) : (
            ""
          )}
          {/* A reason that ends its own sentence ("… instead.") is not given a second full stop. */}
          {request.status === "denied" && /[.!?]$/.test(request.note?.trim() ?? "") ? " " : ". "}
          Nothing more can be decided here.
        </p>
      ) : view.message ? (
        <p className="notice" role="alert" data-testid="link-problem">
          {view.message}
        </p>
      ) : !view.usable ? (
        <p className="notice" data-testid="link-problem">
          This request has expired; nothing can be decided.
        </p>
      ) : null}
    </main>
  );
}
