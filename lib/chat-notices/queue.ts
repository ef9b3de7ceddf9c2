import type { Db } from "../db";
import { queueMessages } from "../db/outbox";
import type { ChatNotice } from "./notice";
import { findChatChannels, findNoticedProviders, insertChatNotices, type ChatProvider } from "./sql";

// Chat notices go through the outbox like every message (lib/db/outbox.ts): written in the transaction that opened,
// decided, escalated or expired the call, delivered afterwards by lib/mail/delivery.ts, never on the request path.

interface Owner {
  tenantId: string;
  orderId: string;
}

/** The providers a newly held call is announced to: the tenant's connected ones. */
export async function providersToAnnounce(client: Db, tenantId: string): Promise<ChatProvider[]> {
  return (await findChatChannels(client, tenantId)).map((channel) => channel.provider);
}

/** The providers a change of the call goes to: those it was announced to, whatever was connected since. */
export async function providersToUpdate(client: Db, approvalId: string): Promise<ChatProvider[]> {
  return findNoticedProviders(client, approvalId);
}

/** Queues the announcement of a held call to each provider and records it, so its later changes follow it there. */
export async function queueAnnouncement(
  client: Db,
  owner: Owner,
  providers: ChatProvider[],
  notice: ChatNotice,
): Promise<void> {
  await insertChatNotices(client, { approvalId: notice.approvalId, tenantId: owner.tenantId }, providers);
  await queue(client, owner, providers, "notice", notice);
}

/** Queues a change of the call: Slack's message is updated in place, Teams gets a follow-up card. */
export async function queueUpdate(
  client: Db,
  owner: Owner,
  providers: ChatProvider[],
  notice: ChatNotice,
): Promise<void> {
  await queue(client, owner, providers, "update", notice);
}

async function queue(
  client: Db,
  owner: Owner,
  providers: ChatProvider[],
  phase: "notice" | "update",
  notice: ChatNotice,
): Promise<void> {
  await queueMessages(
    client,
    { tenantId: owner.tenantId, orderId: owner.orderId, toolCallId: null },
    providers.map((provider) => ({
      kind: `${provider}_${phase}`,
      recipient: provider,
      subject: notice.approvalId,
      body: JSON.stringify(notice),
    })),
  );
}
