import Link from "next/link";
import { OpenConversationForm } from "@/components/open-conversation-form";
import { TimeAgo } from "@/components/ui/time-ago";
import { count } from "@/components/ui/words";
import { requireRole } from "@/lib/auth/guards";
import { listAgentConversations, searchCustomers } from "@/lib/conversations";

export const dynamic = "force-dynamic";

export default async function ConversationsPage() {
  const user = await requireRole(["AGENT"], "/conversations");
  const [conversations, firstCustomers] = await Promise.all([
    listAgentConversations({ userId: user.id, tenantId: user.tenantId }),
    searchCustomers(user.tenantId, ""),
  ]);
  return (
    <main>
      <h1>Your conversations</h1>
      <OpenConversationForm firstCustomers={firstCustomers} />
      {conversations.length === 0 ? (
        <p className="muted" data-testid="conversations-empty">
          No conversations yet. Open one above for a customer; your agent runtime can also open them over the API.
        </p>
      ) : (
        <table className="stack" data-testid="conversations">
          <thead>
            <tr>
              <th>Customer</th>
              <th>Status</th>
              <th>Calls</th>
              <th>Last activity</th>
            </tr>
          </thead>
          <tbody>
            {conversations.map((conversation) => (
              <tr key={conversation.id} data-testid="conversation-row" data-conversation-id={conversation.id}>
                <td data-label="Customer">
                  <Link href={`/conversations/${conversation.id}`}>{conversation.customerEmail}</Link>
                  <div className="muted">
                    {conversation.orderId ? `bound to ${conversation.orderId} · ` : ""}
                    <code>{conversation.id}</code>
                  </div>
                </td>
                <td data-label="Status" data-testid="conversation-status">
                  {conversation.pending > 0 ? (
                    <span className="kind-pending_approval">{`${count(conversation.pending, "request")} waiting for approval`}</span>
                  ) : conversation.calls === 0 ? (
                    "no calls yet"
                  ) : (
                    "nothing waiting"
                  )}
                </td>
                <td data-label="Calls">
                  {count(conversation.calls, "call")}, {count(conversation.writesMade, "write")}
                </td>
                <td data-label="Last activity">
                  <TimeAgo iso={conversation.lastActivityAt.toISOString()} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
