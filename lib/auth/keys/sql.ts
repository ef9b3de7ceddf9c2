import type { Db } from "../../db";
import { Prisma } from "../../generated/prisma/client";

/** Stores a new API key by its hash and prefix (the key itself is never stored). */
export async function insertApiKey(
  db: Db,
  key: { id: string; tenantId: string; userId: string; prefix: string; hash: string },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ApiKey" ("id", "tenantId", "userId", "prefix", "hash")
    VALUES (${key.id}, ${key.tenantId}, ${key.userId}, ${key.prefix}, ${key.hash})`;
}

/** How a request names its key row: a pasted key by its hash, or an OAuth connection's row by its id. */
export type KeyCredential = { hash: string } | { keyId: string };

/**
 * Which rows authenticate this credential: the key, not revoked and not waiting for a second admin, of an active
 * agent of the key's own tenant (aliases k and ku). Every lookup of an agent by its key uses this, alone or joined to more.
 */
export function agentKeyRows(credential: KeyCredential): { from: Prisma.Sql; where: Prisma.Sql } {
  const match =
    "hash" in credential ? Prisma.sql`k."hash" = ${credential.hash}` : Prisma.sql`k."id" = ${credential.keyId}`;
  return {
    from: Prisma.sql`"ApiKey" k JOIN "User" ku ON ku."id" = k."userId" AND ku."tenantId" = k."tenantId"`,
    where: Prisma.sql`${match} AND k."revokedAt" IS NULL AND k."pendingChangeId" IS NULL AND ku."active" AND ku."role" = 'AGENT'`,
  };
}

/** The key id, agent and tenant that a key with this hash authenticates, or null. */
export async function findAgentByKeyHash(
  db: Db,
  hash: string,
): Promise<{ apiKeyId: string; userId: string; tenantId: string } | null> {
  const key = agentKeyRows({ hash });
  const [row] = await db.$queryRaw<{ apiKeyId: string; userId: string; tenantId: string }[]>`
    SELECT k."id" AS "apiKeyId", ku."id" AS "userId", k."tenantId" FROM ${key.from} WHERE ${key.where}`;
  return row ?? null;
}

/** Whether the key row still authenticates its agent: not revoked, not held, of an active agent. */
export async function keyAuthenticates(db: Db, keyId: string): Promise<boolean> {
  const key = agentKeyRows({ keyId });
  const [row] = await db.$queryRaw<{ apiKeyId: string }[]>`
    SELECT k."id" AS "apiKeyId" FROM ${key.from} WHERE ${key.where}`;
  return row !== undefined;
}

/** Marks an OAuth connection used now, at most once a minute so busy connections do not write on every call. */
export async function touchConnection(db: Db, grantId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "OAuthGrant" SET "lastUsedAt" = CURRENT_TIMESTAMP
    WHERE "id" = ${grantId} AND "revokedAt" IS NULL
      AND ("lastUsedAt" IS NULL OR "lastUsedAt" < CURRENT_TIMESTAMP - interval '1 minute')`;
}
