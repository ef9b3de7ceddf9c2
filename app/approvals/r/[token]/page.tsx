import Link from "next/link";
import { LinkDecisionForm } from "@/components/approvals/link-decision-form";
import { TimeAgo } from "@/components/ui/time-ago";
import { argumentWords, callSummary } from "@/components/ui/words";
import { openApprovalLink } from "@/lib/approvals/links";
import { requireRole } from "@/lib/auth/guards";
import { formatMoney } from "@/lib/money";
import { outcomeTitle } from "@/lib/calls/words";

export const dynamic = "force-dynamic";
// The token is in this page's address: never send it on to another site.
export const metadata = { title: "Approval request · toolgate", referrer: "no-referrer" };

const STATUS_WORDS: Record<string, string> = {
  approved: "approved",
  denied: "denied",
  failed: "stopped by its re-check",
  expired: "expired",
  withdrawn: "withdrawn by the agent",
};

export default async function ApprovalLinkPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const user = await requireRole(["SUPERVISOR"], `/approvals/r/${token}`);
  const view = await openApprovalLink(user, token);
  if (!view.ok) {
    return (
      <main>
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
  const summary = callSummary({ ...request, currency: request.currency });
  const customer = request.customerEmail ?? "the customer";
  return (
    <main>
      <h1 data-testid="link-title">{summary.charAt(0).toUpperCase() + summary.slice(1)}</h1>
      <section className="card">
        <dl className="facts">
          <dt>Customer</dt>
          <dd>{customer}</dd>
          <dt>Order</dt>
          <dd data-testid="link-order">
            {request.orderId}: {request.orderStatus}, total {formatMoney(request.orderTotalCents, request.currency)},
            refunded {formatMoney(request.orderRefundedCents, request.currency)}
          </dd>
          {argumentWords(request.arguments)
            .filter(([label]) => label !== "Order")
            .map(([label, value]) => (
              <div key={label} style={{ display: "contents" }}>
                <dt>{label}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          <dt>Requested by</dt>
          <dd>
            {request.requestedBy} <TimeAgo iso={request.createdAt.toISOString()} /> ·{" "}
            <Link href={`/calls/${request.originCallId}`}>timeline of the call</Link>
          </dd>
          {request.status === "pending" && (
            <>
              <dt>Expires</dt>
              <dd>
                <TimeAgo iso={request.expiresAt.toISOString()} />
              </dd>
            </>
          )}
        </dl>
      </section>
      <LinkDecisionForm
        token={token}
        summary={summary}
        customer={customer}
        open={view.usable}
        approval={{ id: request.id, cents: request.approvingCents }}
      />
      {request.status !== "pending" ? (
        <p className="notice" data-testid="link-status">
          Already {STATUS_WORDS[request.status] ?? request.status}
          {request.decidedBy ? ` by ${request.decidedBy}` : ""}
          {request.decidedAt ? (
            <>
              {" "}
              <TimeAgo iso={request.decidedAt.toISOString()} />
            </>
          ) : null}
          {request.resultCode ? `: ${(outcomeTitle(request.resultCode) ?? request.resultCode).toLowerCase()}` : ""}.
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
