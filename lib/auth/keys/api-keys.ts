import { randomBytes } from "node:crypto";
import { sha256Hex } from "../../canonical";
import { db, type Db } from "../../db";
import { newId } from "../../ids";
import { verifyAccessToken, looksLikeJwt } from "./access-tokens";
import { findAgentByKeyHash, insertApiKey, touchConnection, type KeyCredential } from "./sql";

export interface AuthenticatedAgent {
  apiKeyId: string;
  userId: string;
  tenantId: string;
  /**
   * Set when an OAuth access token authenticated the request: the connection and the scopes it was granted;
   * `withheld`, once a conversation is found, the conversation's scopes the connection was not granted.
   */
  connection?: { id: string; clientId: string; scopes: string[]; withheld?: string[] };
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
  return findAgentByKeyHash(db, hash);
}

/**
 * `authenticateApiKey` for a request that spends its agent's per-minute budget (the tenant's `rateKeyPerMin`, which
 * its calls spend too), counted by the key's lookup itself: `retryAfterSeconds` once this request is past the budget.
 */
export async function authenticateCountedApiKey(
  authorization: string | null,
): Promise<{ agent: AuthenticatedAgent; retryAfterSeconds?: number } | null> {
  const hash = apiKeyHash(authorization);
  if (hash === null) return null;
  const row = await findAgentByKeyHash(db, hash, true);
  if (!row) return null;
  const { rate, ...agent } = row;
  return rate && rate.count > rate.limit ? { agent, retryAfterSeconds: Math.max(1, rate.retryAfter) } : { agent };
}

/** What a bearer value names: a pasted key, or (where access tokens are accepted) a valid token's connection. */
export type Bearer =
  | { credential: KeyCredential; connection?: undefined }
  | { credential: KeyCredential; connection: NonNullable<AuthenticatedAgent["connection"]> };

/**
 * The key row an `Authorization: Bearer` header names, or null. With `issuer`, a JWT is read as an OAuth access
 * token for that issuer's MCP resource; without, only pasted keys count (access tokens are for /api/mcp alone).
 */
export async function bearerOf(authorization: string | null, issuer: string | null): Promise<Bearer | null> {
  const hash = apiKeyHash(authorization);
  if (hash !== null) return { credential: { hash } };
  const token = /^Bearer (\S{1,4096})$/.exec(authorization ?? "")?.[1];
  if (!issuer || !token || !looksLikeJwt(token)) return null;
  const claims = await verifyAccessToken(issuer, token);
  if (!claims) return null;
  await touchConnection(db, claims.gid);
  return {
    credential: { keyId: claims.key },
    connection: { id: claims.gid, clientId: claims.client_id, scopes: claims.scope.split(" ").filter(Boolean) },
  };
}
