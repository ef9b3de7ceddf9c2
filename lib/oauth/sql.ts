import type { Db, Tx } from "../db";
import { Prisma } from "../generated/prisma/client";
import { countCall } from "../sql";

// The OAuth module's statements (decision 017): clients, connections (grants), codes and refresh tokens.

export interface ClientRow {
  id: string;
  kind: "cimd" | "dcr";
  name: string;
  redirectUris: string[];
  clientUri: string | null;
  fetchedAt: Date | null;
  /** Until when a metadata document's copy is used without fetching it again (its cache headers, bounded). */
  cacheUntil: Date | null;
}

export async function findClient(db: Db, id: string): Promise<ClientRow | null> {
  const [row] = await db.$queryRaw<ClientRow[]>`
    SELECT "id", "kind", "name", "redirectUris", "clientUri", "fetchedAt", "cacheUntil" FROM "OAuthClient"
    WHERE "id" = ${id}`;
  return row ?? null;
}

/**
 * Stores a client's metadata document as fetched now (a newer fetch replaces the cached one, keys included); the
 * key set kept from its `jwks_uri` is dropped when the document names another.
 */
export async function upsertMetadataClient(
  db: Db,
  client: {
    id: string;
    name: string;
    redirectUris: string[];
    clientUri: string | null;
    authMethod: "none" | "private_key_jwt";
    jwksUri: string | null;
    cacheUntil: Date;
  },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "OAuthClient" ("id", "kind", "name", "redirectUris", "clientUri", "fetchedAt", "authMethod", "jwksUri",
                               "cacheUntil")
    VALUES (${client.id}, 'cimd', ${client.name}, ${client.redirectUris}, ${client.clientUri}, CURRENT_TIMESTAMP,
            ${client.authMethod}, ${client.jwksUri}, ${client.cacheUntil})
    ON CONFLICT ("id") DO UPDATE SET "name" = EXCLUDED."name", "redirectUris" = EXCLUDED."redirectUris",
      "clientUri" = EXCLUDED."clientUri", "fetchedAt" = EXCLUDED."fetchedAt", "authMethod" = EXCLUDED."authMethod",
      "jwksUri" = EXCLUDED."jwksUri", "cacheUntil" = EXCLUDED."cacheUntil",
      "jwks" = CASE WHEN "OAuthClient"."jwksUri" = EXCLUDED."jwksUri" THEN "OAuthClient"."jwks" END,
      "jwksCacheUntil" = CASE WHEN "OAuthClient"."jwksUri" = EXCLUDED."jwksUri" THEN "OAuthClient"."jwksCacheUntil" END
    WHERE "OAuthClient"."kind" = 'cimd'`;
}

export async function insertRegisteredClient(
  db: Db,
  client: {
    id: string;
    name: string;
    redirectUris: string[];
    clientUri: string | null;
    registeredFrom: string;
    authMethod: "none" | "client_secret_post";
    secretHash: string | null;
  },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "OAuthClient" ("id", "kind", "name", "redirectUris", "clientUri", "registeredFrom", "authMethod", "secretHash")
    VALUES (${client.id}, 'dcr', ${client.name}, ${client.redirectUris}, ${client.clientUri}, ${client.registeredFrom},
            ${client.authMethod}, ${client.secretHash})`;
}

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

/** Clients registered from this address, and from anywhere, in the last hour (the registration rate limit). */
export async function countRecentRegistrations(db: Db, address: string): Promise<{ fromAddress: number; all: number }> {
  const [row] = await db.$queryRaw<{ fromAddress: number; all: number }[]>`
    SELECT count(*) FILTER (WHERE "registeredFrom" = ${address})::int AS "fromAddress", count(*)::int AS "all"
    FROM "OAuthClient" WHERE "kind" = 'dcr' AND "createdAt" > CURRENT_TIMESTAMP - interval '1 hour'`;
  return row;
}

/** The signed-in agent with what a consent needs: name, tenant, whether the tenant allows self-registered clients. */
export async function findConsentingAgent(db: Db, userId: string, tenantId: string) {
  const [row = null] = await db.$queryRaw<
    {
      id: string;
      email: string;
      name: string;
      role: string;
      canRefund: boolean;
      active: boolean;
      tenantName: string;
      dcrEnabled: boolean;
    }[]
  >`
    SELECT u."id", u."email", u."name", u."role", u."canRefund", u."active", t."name" AS "tenantName",
           t."oauthDcrEnabled" AS "dcrEnabled"
    FROM "User" u JOIN "Tenant" t ON t."id" = u."tenantId"
    WHERE u."id" = ${userId} AND u."tenantId" = ${tenantId}`;
  return row;
}

/** The emails of the tenant's active admins. */
export async function findTenantAdmins(db: Db, tenantId: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ email: string }[]>`
    SELECT "email" FROM "User" WHERE "tenantId" = ${tenantId} AND "role" = 'ADMIN' AND "active" ORDER BY "email"`;
  return rows.map((row) => row.email);
}

export async function insertConnectionKey(
  tx: Tx,
  key: { id: string; tenantId: string; userId: string; hash: string },
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO "ApiKey" ("id", "tenantId", "userId", "prefix", "hash")
    VALUES (${key.id}, ${key.tenantId}, ${key.userId}, 'oauth', ${key.hash})`;
}

export async function insertGrant(
  tx: Tx,
  grant: {
    id: string;
    tenantId: string;
    agentId: string;
    clientId: string;
    apiKeyId: string;
    scopes: string[];
    redirectUri: string;
    grantedById: string;
  },
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO "OAuthGrant" ("id", "tenantId", "agentId", "clientId", "apiKeyId", "scopes", "redirectUri", "grantedById")
    VALUES (${grant.id}, ${grant.tenantId}, ${grant.agentId}, ${grant.clientId}, ${grant.apiKeyId}, ${grant.scopes},
            ${grant.redirectUri}, ${grant.grantedById})`;
}

export async function insertCode(
  tx: Tx,
  code: { hash: string; grantId: string; codeChallenge: string; expiresAt: Date },
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO "OAuthCode" ("hash", "grantId", "codeChallenge", "expiresAt")
    VALUES (${code.hash}, ${code.grantId}, ${code.codeChallenge}, ${code.expiresAt})`;
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
 * Ends a connection of the tenant (of one agent, with `agentId`): the grant and its key row, so the next call with
 * any of its tokens is refused on every instance. Returns the grant when it was live, undefined otherwise.
 */
export async function revokeGrant(
  tx: Tx,
  tenantId: string,
  grantId: string,
  reason: string,
  agentId: string | null = null,
): Promise<{ id: string; agentId: string; clientId: string } | undefined> {
  const [row] = await tx.$queryRaw<{ id: string; agentId: string; clientId: string; apiKeyId: string }[]>`
    UPDATE "OAuthGrant" SET "revokedAt" = CURRENT_TIMESTAMP, "revokedReason" = ${reason}
    WHERE "id" = ${grantId} AND "tenantId" = ${tenantId} AND (${agentId}::text IS NULL OR "agentId" = ${agentId})
      AND "revokedAt" IS NULL
    RETURNING "id", "agentId", "clientId", "apiKeyId"`;
  if (!row) return undefined;
  await tx.$executeRaw`
    UPDATE "ApiKey" SET "revokedAt" = CURRENT_TIMESTAMP WHERE "id" = ${row.apiKeyId} AND "revokedAt" IS NULL`;
  return { id: row.id, agentId: row.agentId, clientId: row.clientId };
}

export interface ConnectionRow {
  id: string;
  agentId: string;
  agentName: string;
  agentEmail: string;
  clientId: string;
  clientName: string;
  clientKind: "cimd" | "dcr";
  redirectUri: string;
  scopes: string[];
  grantedBy: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/**
 * The tenant's connections (or one agent's, with `agentId`), live ones first, newest first; revoked ones of the
 * last 30 days stay listed.
 */
export async function findConnections(
  db: Db,
  tenantId: string,
  agentId: string | null = null,
): Promise<ConnectionRow[]> {
  return db.$queryRaw<ConnectionRow[]>`
    SELECT g."id", g."agentId", a."name" AS "agentName", a."email" AS "agentEmail", g."clientId",
           c."name" AS "clientName", c."kind" AS "clientKind", g."redirectUri", g."scopes",
           COALESCE(p."name", g."grantedById") AS "grantedBy", g."createdAt", g."lastUsedAt", g."revokedAt"
    FROM "OAuthGrant" g
    JOIN "OAuthClient" c ON c."id" = g."clientId"
    JOIN "User" a ON a."id" = g."agentId" AND a."tenantId" = g."tenantId"
    LEFT JOIN "User" p ON p."id" = g."grantedById"
    WHERE g."tenantId" = ${tenantId} AND (${agentId}::text IS NULL OR g."agentId" = ${agentId})
      AND (g."revokedAt" IS NULL OR g."revokedAt" > CURRENT_TIMESTAMP - interval '30 days')
    ORDER BY g."revokedAt" IS NOT NULL, a."name", g."createdAt" DESC
    LIMIT 200`;
}

export async function findDcrEnabled(db: Db, tenantId: string): Promise<boolean> {
  const [row] = await db.$queryRaw<{ enabled: boolean }[]>`
    SELECT "oauthDcrEnabled" AS "enabled" FROM "Tenant" WHERE "id" = ${tenantId}`;
  return row?.enabled ?? false;
}

/**
 * Counts one metadata document fetch in this minute's buckets of the person who caused it ("m:u:" and their id)
 * and of the host it goes to ("m:h:" and the host name); returns both as the count left them.
 */
export async function countMetadataFetch(
  db: Db,
  fetch: { userId: string; host: string },
): Promise<{ key: string; count: number; retryAfter: number }[]> {
  return db.$queryRaw(countCall(Prisma.sql`ARRAY[${`m:u:${fetch.userId}`}::text, ${`m:h:${fetch.host}`}::text]`));
}

/**
 * Counts one fetch of a client's key set (its `jwks_uri`) in this minute's buckets of the client ("k:c:" and its id)
 * and of the host it goes to, the bucket metadata document fetches count in ("m:h:" and the host name).
 */
export async function countKeySetFetch(
  db: Db,
  fetch: { clientId: string; host: string },
): Promise<{ key: string; count: number; retryAfter: number }[]> {
  return db.$queryRaw(countCall(Prisma.sql`ARRAY[${`k:c:${fetch.clientId}`}::text, ${`m:h:${fetch.host}`}::text]`));
}
