import { randomBytes } from "node:crypto";
import { sha256Hex } from "../canonical";
import { db, type Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import { newId } from "../ids";

export interface AuthenticatedAgent {
  apiKeyId: string;
  userId: string;
  tenantId: string;
}

/**
 * Keys carry 256 random bits, so a plain SHA-256 is enough to store them: nothing to brute-force, and the
 * lookup by hash stays one indexed query per request. The key itself is shown once and never stored.
 */
export async function createApiKey(
  client: Db,
  user: { id: string; tenantId: string },
): Promise<{ id: string; key: string }> {
  const key = `tg_${randomBytes(32).toString("base64url")}`;
  const id = newId("key");
  await client.$executeRaw`
    INSERT INTO "ApiKey" ("id", "tenantId", "userId", "prefix", "hash")
    VALUES (${id}, ${user.tenantId}, ${user.id}, ${key.slice(0, 10)}, ${sha256Hex(key)})`;
  return { id, key };
}

/** The stored hash of the key in an `Authorization: Bearer` header, or null when the header holds no key. */
export function apiKeyHash(authorization: string | null): string | null {
  const match = /^Bearer ([A-Za-z0-9_-]{10,200})$/.exec(authorization ?? "");
  return match ? sha256Hex(match[1]) : null;
}

/**
 * Which rows authenticate a key with this hash: the key, not revoked, of an active agent of the key's own
 * tenant (aliases k and ku). Every lookup of an agent by its key uses this, alone or joined to more.
 */
export function agentKeyRows(hash: string): { from: Prisma.Sql; where: Prisma.Sql } {
  return {
    from: Prisma.sql`"ApiKey" k JOIN "User" ku ON ku."id" = k."userId" AND ku."tenantId" = k."tenantId"`,
    where: Prisma.sql`k."hash" = ${hash} AND k."revokedAt" IS NULL AND ku."active" AND ku."role" = 'AGENT'`,
  };
}

/** The agent a bearer key belongs to, or null for a missing, unknown or revoked key or an inactive user. */
export async function authenticateApiKey(authorization: string | null): Promise<AuthenticatedAgent | null> {
  const hash = apiKeyHash(authorization);
  if (hash === null) return null;
  const key = agentKeyRows(hash);
  // Raw SQL on the per-request path: one indexed lookup, no ORM round of its own (docs/BENCHMARKS.md).
  const [row] = await db.$queryRaw<AuthenticatedAgent[]>`
    SELECT k."id" AS "apiKeyId", ku."id" AS "userId", k."tenantId" FROM ${key.from} WHERE ${key.where}`;
  return row ?? null;
}
