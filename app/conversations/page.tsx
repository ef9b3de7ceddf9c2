import Link from "next/link";
import { OpenConversationForm } from "@/components/open-conversation-form";
import { requireRole } from "@/lib/auth/guards";
import { listAgentConversations } from "@/lib/conversations";

export const dynamic = "force-dynamic";

export default async function ConversationsPage() {
  const user = await requireRole(["AGENT"]);
  const conversations = await listAgentConversations({ userId: user.id, tenantId: user.tenantId });
  return (
    <main>
      <h1>Your conversations</h1>
      <OpenConversationForm />
      <table>
        <thead>
          <tr>
            <th>Conversation</th>
            <th>Customer</th>
            <th>Bound order</th>
            <th>Calls</th>
            <th>Writes</th>
            <th>Opened</th>
          </tr>
        </thead>
        <tbody>
          {conversations.map((conversation) => (
            <tr key={conversation.id}>
              <td>
                <Link href={`/conversations/${conversation.id}`}>
                  <code>{conversation.id}</code>
                </Link>
              </td>
              <td>{conversation.customerId}</td>
              <td>{conversation.orderId ?? "—"}</td>
              <td>{conversation._count.toolCalls}</td>
              <td>{conversation.writesMade}</td>
              <td>{conversation.createdAt.toISOString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}
