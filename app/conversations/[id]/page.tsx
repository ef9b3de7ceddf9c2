import { notFound } from "next/navigation";
import { LiveRefresh } from "@/components/live-refresh";
import { ProposalConsole } from "@/components/proposal-console";
import { requireRole } from "@/lib/auth/guards";
import { conversationCalls } from "@/lib/conversations";

export const dynamic = "force-dynamic";

export default async function ConversationPage({ params }: { params: Promise<{ id: string }> }) {
  const user = await requireRole(["AGENT"]);
  const { id } = await params;
  const found = await conversationCalls({ userId: user.id, tenantId: user.tenantId }, id);
  if (!found) notFound();
  const { conversation, calls } = found;
  return (
    <main>
      <h1>
        Conversation <code>{conversation.id}</code> <LiveRefresh conversationId={conversation.id} />
      </h1>
      <p className="muted">
        customer {conversation.customerId}
        {conversation.orderId ? ` · bound to ${conversation.orderId}` : ""} · tools {conversation.tools.join(", ")} · {conversation.writesMade} writes ·{" "}
        {conversation.irreversibleCents} cents of irreversible impact so far
      </p>
      <table data-testid="calls">
        <thead>
          <tr>
            <th>Call</th>
            <th>Tool</th>
            <th>Order</th>
            <th>Kind</th>
            <th>Code</th>
            <th>Proposed</th>
            <th>Last change</th>
          </tr>
        </thead>
        <tbody>
          {calls.map((call) => (
            <tr key={call.id} data-testid="call-row" data-call-id={call.id}>
              <td>
                <code>{call.id}</code>
              </td>
              <td>{call.toolName}</td>
              <td>{call.orderId ?? "—"}</td>
              <td className={`kind-${call.kind}`} data-testid="call-kind">
                {call.kind}
              </td>
              <td>
                <code data-testid="call-code">{call.code}</code>
              </td>
              <td>{call.createdAt.toISOString()}</td>
              <td>{call.updatedAt.toISOString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <ProposalConsole conversationId={conversation.id} />
    </main>
  );
}
