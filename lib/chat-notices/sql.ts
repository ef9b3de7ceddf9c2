import type { Db, Tx } from "../db";

// The chat notices' statements: a tenant's chat channels (Slack, Teams) and each held call announced there.

export type ChatProvider = "slack" | "teams";

export interface StoredChannel {
  provider: ChatProvider;
  /** Slack's channel id; null for Teams. */
  channel: string | null;
  /** Encrypted: Slack's bot token or the Teams workflow URL. */
  secret: string;
}

/** The tenant's chat channels, Slack first. */
export async function findChatChannels(db: Db, tenantId: string): Promise<StoredChannel[]> {
  return db.$queryRaw<StoredChannel[]>`
    SELECT "provider", "channel", "secret" FROM "ChatChannel" WHERE "tenantId" = ${tenantId} ORDER BY "provider"`;
}

/** One of the tenant's chat channels, or null when it has none for that provider. */
export async function findChatChannel(db: Db, tenantId: string, provider: ChatProvider): Promise<StoredChannel | null> {
  const [row] = await db.$queryRaw<StoredChannel[]>`
    SELECT "provider", "channel", "secret" FROM "ChatChannel"
    WHERE "tenantId" = ${tenantId} AND "provider" = ${provider}`;
  return row ?? null;
}

/**
 * Locks the tenant's row (every change of its chat channels takes this lock) and returns the provider's channel and
 * stored (encrypted) secret, or null when none is set.
 */
export async function lockChatChannel(
  tx: Tx,
  tenantId: string,
  provider: ChatProvider,
): Promise<{ channel: string | null; secret: string } | null> {
  await tx.$queryRaw`SELECT 1 FROM "Tenant" WHERE "id" = ${tenantId} FOR UPDATE`;
  const [row] = await tx.$queryRaw<{ channel: string | null; secret: string }[]>`
    SELECT "channel", "secret" FROM "ChatChannel" WHERE "tenantId" = ${tenantId} AND "provider" = ${provider}`;
  return row ?? null;
}

/** Sets the provider's channel and encrypted secret for the tenant, or removes it (null). */
export async function setChatChannel(
  db: Db,
  tenantId: string,
  provider: ChatProvider,
  value: { channel: string | null; secret: string } | null,
): Promise<void> {
  if (!value) {
    await db.$executeRaw`DELETE FROM "ChatChannel" WHERE "tenantId" = ${tenantId} AND "provider" = ${provider}`;
    return;
  }
  await db.$executeRaw`
    INSERT INTO "ChatChannel" ("tenantId", "provider", "channel", "secret") VALUES (${tenantId}, ${provider}, ${value.channel}, ${value.secret})
    ON CONFLICT ("tenantId", "provider") DO UPDATE SET "channel" = EXCLUDED."channel", "secret" = EXCLUDED."secret", "createdAt" = now()`;
}

/** Records that a held call is announced to these providers (written with the announcement's outbox rows). */
export async function insertChatNotices(
  db: Db,
  notice: { approvalId: string; tenantId: string },
  providers: ChatProvider[],
): Promise<void> {
  for (const provider of providers)
    await db.$executeRaw`
      INSERT INTO "ChatNotice" ("approvalId", "provider", "tenantId") VALUES (${notice.approvalId}, ${provider}, ${notice.tenantId})
      ON CONFLICT DO NOTHING`;
}

/** The providers a held call was announced to, so that its later changes go there too. */
export async function findNoticedProviders(db: Db, approvalId: string): Promise<ChatProvider[]> {
  const rows = await db.$queryRaw<{ provider: ChatProvider }[]>`
    SELECT "provider" FROM "ChatNotice" WHERE "approvalId" = ${approvalId} ORDER BY "provider"`;
  return rows.map((row) => row.provider);
}

export interface PostedMessage {
  channel: string | null;
  ts: string | null;
  queuedAt: Date;
  shownAt: Date | null;
}

/** Where a held call's Slack message is (channel and ts null until it is posted), or null when it was never announced. */
export async function findSlackMessage(db: Db, approvalId: string): Promise<PostedMessage | null> {
  const [row] = await db.$queryRaw<PostedMessage[]>`
    SELECT "channel", "ts", "queuedAt", "shownAt" FROM "ChatNotice" WHERE "approvalId" = ${approvalId} AND "provider" = 'slack'`;
  return row ?? null;
}

/** Keeps the posted Slack message's channel and ts, unless an earlier send of the same notice already did. */
export async function markSlackPosted(
  db: Db,
  approvalId: string,
  message: { channel: string; ts: string; shownAt: Date },
): Promise<void> {
  await db.$executeRaw`
    UPDATE "ChatNotice" SET "channel" = ${message.channel}, "ts" = ${message.ts}, "postedAt" = now(), "shownAt" = ${message.shownAt}
    WHERE "approvalId" = ${approvalId} AND "provider" = 'slack' AND "ts" IS NULL`;
}

/** Records the latest state the Slack message shows. */
export async function markSlackShown(db: Db, approvalId: string, shownAt: Date): Promise<void> {
  await db.$executeRaw`
    UPDATE "ChatNotice" SET "shownAt" = GREATEST(COALESCE("shownAt", ${shownAt}), ${shownAt})
    WHERE "approvalId" = ${approvalId} AND "provider" = 'slack'`;
}
