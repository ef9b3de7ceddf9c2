import Link from "next/link";
import { notFound } from "next/navigation";
import { LiveRefresh } from "@/components/live-refresh";
import { ProposalConsole } from "@/components/proposal-console";
import { TimeAgo } from "@/components/ui/time-ago";
import { approvedCentsOf, callSummary, count } from "@/components/ui/words";
import { requireRole } from "@/lib/auth/guards";
import { conversationCalls } from "@/lib/conversations";
import type { Outcome } from "@/lib/gateway/outcome";
import { formatMoney } from "@/lib/money";
import { outcomeTitle } from "@/lib/calls/words";

export const dynamic = "force-dynamic";

function amountOf(argsCanonical: string | null): { impactCents: number | null; currency: string | null } {
  const args = argsCanonical ? (JSON.parse(argsCanonical) as Record<string, unknown>) : {};
  return {
    impactCents: typeof args.amount_cents === "number" ? args.amount_cents : null,
    currency: typeof args.currency === "string" ? args.currency : null,
  };
}

export default async function ConversationPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireRole(["AGENT"], `/conversations/${id}`);
  const found = await conversationCalls({ userId: user.id, tenantId: user.tenantId }, id);
  if (!found) notFound();
  const { conversation, calls } = found;
  const currency = calls.map((call) => amountOf(call.argsCanonical).currency).find(Boolean) ?? "USD";
  return (
    <main>
      <h1>
        Conversation with {conversation.customer.email} <LiveRefresh conversationId={conversation.id} />
      </h1>
      <p className="muted">
        {conversation.orderId ? `Bound to ${conversation.orderId} · ` : ""}
        {count(conversation.writesMade, "write")} · {formatMoney(conversation.irreversibleCents, currency)} of
        irreversible impact so far · tools {conversation.tools.join(", ")} · opened{" "}
        <TimeAgo iso={conversation.createdAt.toISOString()} /> · <code>{conversation.id}</code>
      </p>
      {calls.length === 0 ? (
        <p className="muted" data-testid="calls-empty">
          No calls yet. Calls your agent runtime proposes, and those you propose below, appear here as they happen.
        </p>
      ) : (
        <table className="stack" data-testid="calls">
          <thead>
            <tr>
              <th>Call</th>
              <th>Outcome</th>
              <th>Proposed</th>
              <th>Last change</th>
            </tr>
          </thead>
          <tbody>
            {calls.map((call) => {
              const outcome = call.outcome as unknown as Outcome;
              return (
                <tr key={call.id} data-testid="call-row" data-call-id={call.id}>
                  <td data-label="Call">
                    <Link href={`/calls/${call.id}`} data-testid="call-timeline">
                      {callSummary({
                        toolName: call.toolName,
                        orderId: call.orderId,
                        ...amountOf(call.argsCanonical),
                        approvedCents: approvedCentsOf(call.approval?.approvedArgs),
                      })}
                    </Link>
                  </td>
                  <td data-label="Outcome">
                    {outcomeTitle(call.code) && <div>{outcomeTitle(call.code)}</div>}
                    <span className={`kind-${call.kind}`} data-testid="call-kind">
                      {call.kind.replace("_", " ")}
                    </span>{" "}
                    <code data-testid="call-code">{call.code}</code>
                    {outcome.reason && (
                      <div className="muted" data-testid="call-reason">
                        Why: {outcome.reason}
                      </div>
                    )}
                  </td>
                  <td data-label="Proposed">
                    <TimeAgo iso={call.createdAt.toISOString()} />
                  </td>
                  <td data-label="Last change">
                    <TimeAgo iso={call.updatedAt.toISOString()} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <ProposalConsole conversationId={conversation.id} />
    </main>
  );
}
