import { ChatChannels } from "@/components/admin/policy/chat-channels";
import { requireRole } from "@/lib/auth/guards";
import { passkeysOf } from "@/lib/auth/step-up/passkeys/passkeys";
import { chatChannelsOf } from "@/lib/chat-notices/channels";

export const metadata = { title: "Slack and Teams" };

export const dynamic = "force-dynamic";

export default async function AdminChatPage() {
  const user = await requireRole(["ADMIN"], "/admin/chat");
  const [channels, passkeys] = await Promise.all([chatChannelsOf(user.tenantId), passkeysOf(user.id)]);
  return <ChatChannels tenantName={user.tenantName} channels={channels} hasPasskey={passkeys.length > 0} />;
}
