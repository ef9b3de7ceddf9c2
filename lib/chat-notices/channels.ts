import { z } from "zod";
import { db } from "../db";
import { decryptSecret } from "../security/secrets";
import { findChatChannels, type ChatProvider, type StoredChannel } from "./sql";

// A tenant's chat channels as an admin sets them: Slack (a bot token and a channel id) and Teams (a workflow
// webhook URL). The token and the URL are write-only: stored encrypted, never shown again.

export const SlackChannelSchema = z.strictObject({
  provider: z.literal("slack"),
  /** A channel id as Slack shows it under the channel's details (C… public, G… private), not its name. */
  channel: z
    .string()
    .trim()
    .regex(/^[CG][A-Z0-9]{8,20}$/, "a Slack channel id, like C0123456789 (the channel's details show it)"),
  token: z
    .string()
    .trim()
    .regex(/^xoxb-[A-Za-z0-9-]{10,250}$/, "a Slack bot token, starting xoxb- (the app's OAuth & Permissions page)"),
});

export const TeamsChannelSchema = z.strictObject({
  provider: z.literal("teams"),
  url: z.url({ protocol: /^https?$/ }).max(2000),
});

export const ChatChannelSchema = z.discriminatedUnion("provider", [SlackChannelSchema, TeamsChannelSchema]);
export type ChatChannelInput = z.infer<typeof ChatChannelSchema>;

/** Where a provider's secret is stored: a ciphertext copied to another tenant or provider does not open. */
export const chatSecretContext = (tenantId: string, provider: ChatProvider) =>
  `ChatChannel.secret:${tenantId}:${provider}`;

/** Where a channel's notices go, as the admin page, a held change and the audit name it: never its secret. */
export function channelShown(tenantId: string, stored: StoredChannel): string {
  return stored.provider === "slack"
    ? String(stored.channel)
    : new URL(decryptSecret(stored.secret, chatSecretContext(tenantId, stored.provider))).host;
}

/** The tenant's chat channels as the admin page shows them: Slack's channel id and Teams' host. */
export async function chatChannelsOf(tenantId: string): Promise<{ slack: string | null; teams: string | null }> {
  const rows = await findChatChannels(db, tenantId);
  const shown = (provider: ChatProvider) => {
    const row = rows.find((channel) => channel.provider === provider);
    return row ? channelShown(tenantId, row) : null;
  };
  return { slack: shown("slack"), teams: shown("teams") };
}

/** Where a provider's notices go, as a person reads it: Slack's channel id or the Teams workflow's host. */
export function channelWords(provider: ChatProvider, shown: string | null): string {
  if (shown === null) return "none";
  return provider === "slack" ? `Slack channel ${shown}` : `Teams workflow at ${shown}`;
}
