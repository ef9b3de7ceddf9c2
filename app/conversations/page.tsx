import { ConversationList } from "@/components/conversations/conversation-list";
import { requireRole } from "@/lib/auth/guards";
import { listAgentConversations, searchCustomers } from "@/lib/conversations/console";

export const metadata = { title: "Your conversations" };

export const dynamic = "force-dynamic";

export default async function ConversationsPage() {
  const user = await requireRole(["AGENT"], "/conversations");
  const [conversations, firstCustomers] = await Promise.all([
    listAgentConversations({ userId: user.id, tenantId: user.tenantId }),
    searchCustomers(user.tenantId, ""),
  ]);
  return <ConversationList conversations={conversations} firstCustomers={firstCustomers} />;
}
