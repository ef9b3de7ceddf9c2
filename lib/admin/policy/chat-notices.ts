import { consumeStepUpFor, type StepUpHolder } from "../../auth/step-up/step-up";
import { storedDigest } from "../../canonical";
import { channelShown, chatSecretContext, type ChatChannelInput } from "../../chat-notices/channels";
import { lockChatChannel, setChatChannel, type ChatProvider } from "../../chat-notices/sql";
import { transaction } from "../../db";
import { checkOutboundUrl, OutboundRefused } from "../../security/outbound";
import { encryptSecret } from "../../security/secrets";
import { classifyAdminChange } from "../changes/loosening/loosening";
import { holdChange, type HeldChange } from "../changes/two-admin";
import { insertAudit, type Admin } from "../sql";

export type ChatChannelResult =
  | { ok: true; held: HeldChange | null }
  | { ok: false; code: OutboundRefused["code"] | "step-up.required"; message: string };

/**
 * Connects the tenant's Slack (bot token and channel id) or Teams (workflow webhook URL): every held call's agent,
 * customer, amount and reasons would go there, so, like the webhook, a Teams URL reaching a loopback, private,
 * link-local or metadata address, or (in production) a plain http one, is refused first, then the admin's step-up
 * proof for exactly this channel id or URL is consumed and the change waits for a second admin or the delay
 * (docs/decisions/015). Token and URL are stored encrypted; the audit names the channel id or the URL's host.
 */
export async function connectChatChannel(
  admin: Admin,
  input: ChatChannelInput,
  holder: StepUpHolder,
): Promise<ChatChannelResult> {
  const target = input.provider === "slack" ? input.channel : input.url;
  if (input.provider === "teams") {
    try {
      await checkOutboundUrl(input.url, { signed: true });
    } catch (error) {
      if (!(error instanceof OutboundRefused)) throw error;
      const remedy = error.code === "outbound.plain-http" ? "its https:// address" : "the workflow's public address";
      return {
        ok: false,
        code: error.code,
        message: `The Teams workflow URL cannot be used: ${error.message}. Use ${remedy}.`,
      };
    }
  }
  return transaction(async (tx) => {
    const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.chat", provider: input.provider, target });
    if (!stepUp)
      return {
        ok: false,
        code: "step-up.required",
        message: "Connecting a chat channel needs you to confirm it is you first. Nothing was changed.",
      };
    const context = chatSecretContext(admin.tenantId, input.provider);
    const stored = await lockChatChannel(tx, admin.tenantId, input.provider);
    const channel = input.provider === "slack" ? input.channel : null;
    const secret = encryptSecret(input.provider === "slack" ? input.token : input.url, context);
    const change = {
      provider: input.provider,
      shown: channelShown(admin.tenantId, { provider: input.provider, channel, secret }),
      channel,
      secret,
    };
    const base = {
      shown: stored === null ? null : channelShown(admin.tenantId, { provider: input.provider, ...stored }),
      stored: storedDigest(stored?.secret ?? null),
    };
    if (classifyAdminChange({ kind: "chat.set" }) === "needs-second-admin")
      return { ok: true, held: await holdChange(tx, admin, { kind: "chat", change, base }, stepUp) };
    await setChatChannel(tx, admin.tenantId, input.provider, { channel, secret });
    await insertAudit(tx, admin, "chat.connected", { provider: input.provider, shown: change.shown, stepUp });
    return { ok: true, held: null };
  });
}

/** Disconnects the tenant's Slack or Teams at once (tightening): nothing more is sent there, queued notices included. */
export async function disconnectChatChannel(admin: Admin, provider: ChatProvider): Promise<void> {
  await transaction(async (tx) => {
    await setChatChannel(tx, admin.tenantId, provider, null);
    await insertAudit(tx, admin, "chat.disconnected", { provider });
  });
}
