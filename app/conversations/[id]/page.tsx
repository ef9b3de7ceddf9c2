import { notFound } from "next/navigation";
import { ConversationCalls } from "@/components/conversations/conversation-calls";
import { requireRole } from "@/lib/auth/guards";
import { conversationCalls } from "@/lib/conversations/console";

export const metadata = { title: "Conversation" };

export const dynamic = "force-dynamic";

export default async function ConversationPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireRole(["AGENT"], `/conversations/${id}`);
  const found = await conversationCalls({ userId: user.id, tenantId: user.tenantId }, id);
  if (!found) notFound();
  return <ConversationCalls conversation={found.conversation} calls={found.calls} switches={found.switches} />;
}
