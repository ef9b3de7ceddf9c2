import type { Db, Tx } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import { countCall } from "../../db/sql";

/** How a client authenticates at the token endpoint, as stored when it registered or its document was fetched. */
export interface ClientCredentials {
  authMethod: "none" | "private_key_jwt" | "client_secret_post";
  jwksUri: string | null;
  secretHash: string | null;
  /** The key set last fetched from `jwksUri` (checked when it was fetched), and until when it is used as it is. */
  jwks: unknown;
  jwksCacheUntil: Date | null;
}

export async function findClientCredentials(db: Db, id: string): Promise<ClientCredentials | null> {
  const [row = null] = await db.$queryRaw<ClientCredentials[]>`
    SELECT "authMethod", "jwksUri", "secretHash", "jwks", "jwksCacheUntil" FROM "OAuthClient" WHERE "id" = ${id}`;
  return row;
}

/** Keeps the key set fetched from a client's `jwks_uri` until `cacheUntil`, unless its document now names another. */
export async function saveClientKeySet(
  db: Db,
  keySet: { clientId: string; jwksUri: string; jwks: unknown; cacheUntil: Date },
): Promise<void> {
  await db.$executeRaw`
    UPDATE "OAuthClient" SET "jwks" = ${JSON.stringify(keySet.jwks)}::jsonb, "jwksCacheUntil" = ${keySet.cacheUntil}
    WHERE "id" = ${keySet.clientId} AND "jwksUri" = ${keySet.jwksUri}`;
}

/**
 * Records a client assertion's `jti` until it expires; false when it is already recorded (a replay), on any
 * instance. The client's expired entries are dropped on the way.
 */
export async function recordAssertion(
  db: Db,
  assertion: { clientId: string; jti: string; expiresAt: Date },
): Promise<boolean> {
  const inserted = await db.$queryRaw<{ jti: string }[]>`
    WITH "expired" AS (
      DELETE FROM "OAuthClientAssertion"
      WHERE "clientId" = ${assertion.clientId} AND "expiresAt" < CURRENT_TIMESTAMP - interval '5 minutes'
    )
    INSERT INTO "OAuthClientAssertion" ("clientId", "jti", "expiresAt")
    VALUES (${assertion.clientId}, ${assertion.jti}, ${assertion.expiresAt})
    ON CONFLICT ("clientId", "jti") DO NOTHING
    RETURNING "jti"`;
  return inserted.length === 1;
}

/** A grant as the token endpoint checks it: live only while neither it nor its key row is revoked. */
export interface GrantRow {
  id: string;
  tenantId: string;
  agentId: string;
  clientId: string;
  apiKeyId: string;
  scopes: string[];
  redirectUri: string;
  live: boolean;
}

const RAW_GRANT_COLUMNS = Prisma.raw(`g."id", g."tenantId", g."agentId", g."clientId", g."apiKeyId", g."scopes",
  g."redirectUri", (g."revokedAt" IS NULL AND k."revokedAt" IS NULL) AS "live"`);

/** The code by its hash with its grant, locked until the transaction ends (a code is exchanged once). */
export async function lockCode(tx: Tx, hash: string) {
  const [row = null] = await tx.$queryRaw<(GrantRow & { codeChallenge: string; expired: boolean; used: boolean })[]>`
    SELECT ${RAW_GRANT_COLUMNS}, c."codeChallenge", c."expiresAt" <= CURRENT_TIMESTAMP AS "expired", c."usedAt" IS NOT NULL AS "used"
    FROM "OAuthCode" c JOIN "OAuthGrant" g ON g."id" = c."grantId" JOIN "ApiKey" k ON k."id" = g."apiKeyId"
    WHERE c."hash" = ${hash}
    FOR UPDATE OF c, g`;
  return row;
}

export async function markCodeUsed(tx: Tx, hash: string): Promise<void> {
  await tx.$executeRaw`UPDATE "OAuthCode" SET "usedAt" = CURRENT_TIMESTAMP WHERE "hash" = ${hash}`;
}

/**
 * The refresh token by its hash with its grant, locked (a refresh token is used once); `inGrace` while its rotation
 * is younger than the grace window; `lapsed` when it went unused past the tenant's idle lifetime or the connection
 * is older than its absolute lifetime.
 */
export async function lockRefreshToken(tx: Tx, hash: string, graceSeconds: number) {
  const [row = null] = await tx.$queryRaw<(GrantRow & { used: boolean; inGrace: boolean; lapsed: boolean })[]>`
    SELECT ${RAW_GRANT_COLUMNS}, r."usedAt" IS NOT NULL AS "used",
           COALESCE(r."usedAt" > CURRENT_TIMESTAMP - make_interval(secs => ${graceSeconds}), false) AS "inGrace",
           (r."createdAt" <= CURRENT_TIMESTAMP - make_interval(days => t."oauthRefreshIdleDays")
            OR g."createdAt" <= CURRENT_TIMESTAMP - make_interval(days => t."oauthRefreshMaxDays")) AS "lapsed"
    FROM "OAuthRefreshToken" r JOIN "OAuthGrant" g ON g."id" = r."grantId" JOIN "ApiKey" k ON k."id" = g."apiKeyId"
    JOIN "Tenant" t ON t."id" = g."tenantId"
    WHERE r."hash" = ${hash}
    FOR UPDATE OF r, g`;
  return row;
}

/** Whether this grant's refresh token with this hash exists and is not used yet (the grant's current one). */
export async function findUnusedRefreshToken(tx: Tx, hash: string, grantId: string): Promise<boolean> {
  const [row] = await tx.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM "OAuthRefreshToken"
                   WHERE "hash" = ${hash} AND "grantId" = ${grantId} AND "usedAt" IS NULL) AS "found"`;
  return row.found;
}

export async function markRefreshTokenUsed(tx: Tx, hash: string): Promise<void> {
  await tx.$executeRaw`UPDATE "OAuthRefreshToken" SET "usedAt" = CURRENT_TIMESTAMP WHERE "hash" = ${hash}`;
}

export async function insertRefreshToken(tx: Tx, token: { hash: string; grantId: string }): Promise<void> {
  await tx.$executeRaw`INSERT INTO "OAuthRefreshToken" ("hash", "grantId") VALUES (${token.hash}, ${token.grantId})`;
}

/**
 * Counts one fetch of a client's key set (its `jwks_uri`) in this minute's buckets of the client ("k:c:" and its id,
 * or "k:u:" for a fetch of a key the kept set lacks, which anyone can cause) and of the host it goes to ("k:h:" and
 * the host name): a bucket of key sets' own, so metadata document fetches a stranger can cause (their "m:h:" bucket)
 * never use up the fetches that authenticate clients.
 */
export async function countKeySetFetch(
  db: Db,
  fetch: { clientId: string; host: string; unknownKey: boolean },
): Promise<{ key: string; count: number; retryAfter: number }[]> {
  const client = `${fetch.unknownKey ? "k:u:" : "k:c:"}${fetch.clientId}`;
  return db.$queryRaw(countCall(Prisma.sql`ARRAY[${client}::text, ${`k:h:${fetch.host}`}::text]`));
}
