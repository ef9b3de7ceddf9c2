import { randomBytes } from "node:crypto";
import { sha256Hex } from "../canonical";
import { db, type Db } from "../db";
import { newId } from "../ids";
import { findAgentByKeyHash, insertApiKey } from "./sql";

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
  await insertApiKey(client, {
    id,
    tenantId: user.tenantId,
    userId: user.id,
    prefix: key.slice(0, 10),
    hash: sha256Hex(key),
  });
  return { id, key };
}

/** The stored hash of the key in an `Authorization: Bearer` header, or null when the header holds no key. */
export function apiKeyHash(authorization: string | null): string | null {
  const match = /^Bearer ([A-Za-z0-9_-]{10,200})$/.exec(authorization ?? "");
  return match ? sha256Hex(match[1]) : null;
}

/** The agent a bearer key belongs to, or null for a missing, unknown or revoked key or an inactive user. */
export async function authenticateApiKey(authorization: string | null): Promise<AuthenticatedAgent | null> {
  const hash = apiKeyHash(authorization);
  if (hash === null) return null;
  // Raw SQL on the per-request path: one indexed lookup, no ORM round of its own (docs/BENCHMARKS.md).
  return (await findAgentByKeyHash(db, hash)) ?? null;
}
