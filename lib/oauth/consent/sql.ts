import type { Db, Tx } from "../../db";

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
