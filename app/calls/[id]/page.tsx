import { notFound } from "next/navigation";
import { CallTimeline } from "@/components/calls/call-timeline";
import { EVERY_ROLE, requireRole } from "@/lib/auth/guards";
import { callTimeline } from "@/lib/calls/timeline";

export const metadata = { title: "Call timeline" };

export const dynamic = "force-dynamic";

export default async function CallTimelinePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireRole(EVERY_ROLE, `/calls/${id}`);
  const found = await callTimeline(user.tenantId, id);
  if (!found) notFound();
  return <CallTimeline {...found} ownConversation={user.role === "AGENT" && user.id === found.call.agentId} />;
}
