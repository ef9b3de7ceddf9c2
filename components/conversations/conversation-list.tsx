import Link from "next/link";
import { OpenConversationForm } from "./open-conversation-form";
import { Table } from "@/components/ui/table";
import { TimeAgo } from "@/components/ui/time-ago";
import { count } from "@/lib/words";
import type { ConversationListItem, CustomerChoice } from "@/lib/conversations/console";

/** An agent's conversations, newest activity first, under the form that opens a new one. */
export function ConversationList({
  conversations,
  firstCustomers,
}: {
  conversations: ConversationListItem[];
  firstCustomers: CustomerChoice[];
}) {
  return (
    <main id="main">
      <h1>Your conversations</h1>
      <OpenConversationForm firstCustomers={firstCustomers} />
      {conversations.length === 0 ? (
        <p className="muted" data-testid="conversations-empty">
          No conversations yet. Open one above for a customer; your agent runtime can also open them over the API.
        </p>
      ) : (
        <Table
          testId="conversations"
          rows={conversations}
          rowKey={(conversation) => conversation.id}
          rowProps={(conversation) => ({ "data-testid": "conversation-row", "data-conversation-id": conversation.id })}
          columns={[
            {
              label: "Customer",
              cell: (conversation) => (
                <>
                  <Link href={`/conversations/${conversation.id}`}>{conversation.customerEmail}</Link>
                  <div className="muted">
                    {conversation.orderId ? `bound to ${conversation.orderId} · ` : ""}
                    <code>{conversation.id}</code>
                  </div>
                </>
              ),
            },
            {
              label: "Status",
              testId: "conversation-status",
              cell: (conversation) =>
                conversation.pending > 0 ? (
                  <span className="kind-pending_approval">{`${count(conversation.pending, "request")} waiting for approval`}</span>
                ) : conversation.calls === 0 ? (
                  "no calls yet"
                ) : (
                  "nothing waiting"
                ),
            },
            {
              label: "Calls",
              cell: (conversation) =>
                `${count(conversation.calls, "call")}, ${count(conversation.writesMade, "write")} made`,
            },
            {
              label: "Last activity",
              cell: (conversation) => <TimeAgo iso={conversation.lastActivityAt.toISOString()} />,
            },
          ]}
        />
      )}
    </main>
  );
}
