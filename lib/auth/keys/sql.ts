import type { Db } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import { countCall } from "../../db/sql";

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

/** The agent's rate bucket as a request left it, with the tenant's `rateKeyPerMin`. */
export interface CountedRequest {
  count: number;
  limit: number;
  retryAfter: number;
}

type KeyAgentRow = { apiKeyId: string; userId: string; tenantId: string; rate?: CountedRequest };

/**
 * The key id, agent and tenant that a key with this hash authenticates, or null. With `countRequest`, the same
 * statement also counts the request in its agent's rate bucket and returns that bucket (`rate`), only when the key
 * authenticates.
 */
export async function findAgentByKeyHash(db: Db, hash: string, countRequest = false): Promise<KeyAgentRow | null> {
  const key = agentKeyRows({ hash });
  const lookup = Prisma.sql`
    SELECT k."id" AS "apiKeyId", ku."id" AS "userId", k."tenantId" FROM ${key.from} WHERE ${key.where}`;
  // The agent's bucket as lib/gateway/checks/rate.ts names it ("a:" and the agent's id): one across all its keys.
  const bucket = Prisma.sql`(SELECT ARRAY['a:' || f."userId"] FROM found f)`;
  const statement = countRequest
    ? Prisma.sql`WITH found AS (${lookup}), counted AS (${countCall(bucket)})
        SELECT found.*, json_build_object('count', counted."count", 'limit', t."rateKeyPerMin", 'retryAfter', counted."retryAfter") AS "rate"
        FROM found CROSS JOIN counted JOIN "Tenant" t ON t."id" = found."tenantId"`
    : lookup;
  const [row] = await db.$queryRaw<KeyAgentRow[]>(statement);
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
