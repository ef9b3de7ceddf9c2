import type { Client, Db, Tx } from "../../db";
import { Prisma } from "../../generated/prisma/client";

/** The tenant's agent with this id (with its email and refund permission), or null. */
export async function findTenantAgent(
  db: Db,
  tenantId: string,
  userId: string,
): Promise<{ id: string; tenantId: string; email: string; canRefund: boolean } | null> {
  const [agent] = await db.$queryRaw<{ id: string; tenantId: string; email: string; canRefund: boolean }[]>`
    SELECT "id", "tenantId", "email", "canRefund" FROM "User"
    WHERE "id" = ${userId} AND "tenantId" = ${tenantId} AND "role" = 'AGENT'
    LIMIT 1`;
  return agent ?? null;
}

/** Sets the agent's refund permission if it differs; returns how many rows changed (0 or 1). */
export async function setCanRefund(db: Db, tenantId: string, userId: string, canRefund: boolean): Promise<number> {
  return db.$executeRaw`
    UPDATE "User" SET "canRefund" = ${canRefund}
    WHERE "id" = ${userId} AND "tenantId" = ${tenantId} AND "canRefund" = ${!canRefund}`;
}

/** Allows or refuses self-registered OAuth clients (RFC 7591) in the tenant; 0 when it already was so. */
export async function setTenantSelfRegistration(db: Db, tenantId: string, enabled: boolean): Promise<number> {
  return db.$executeRaw`
    UPDATE "Tenant" SET "oauthDcrEnabled" = ${enabled} WHERE "id" = ${tenantId} AND "oauthDcrEnabled" <> ${enabled}`;
}

/** Locks the tenant's row and returns whether self-registered OAuth clients may be granted there. */
export async function lockTenantSelfRegistration(tx: Tx, tenantId: string): Promise<boolean> {
  const [row] = await tx.$queryRaw<{ enabled: boolean }[]>`
    SELECT "oauthDcrEnabled" AS "enabled" FROM "Tenant" WHERE "id" = ${tenantId} FOR UPDATE`;
  return row.enabled;
}

/** The tenant's agents by name, each with its keys, newest first. */
export async function findAgentsWithKeys(db: Client, tenantId: string) {
  return db.user.findMany({
    where: { tenantId, role: "AGENT" },
    orderBy: [{ name: "asc" }, { email: "asc" }],
    select: {
      id: true,
      email: true,
      name: true,
      canRefund: true,
      // A connection's key row (OAuth, decision 017) is listed with its connection, not as a key anyone holds.
      apiKeys: {
        where: { oauthGrant: null },
        orderBy: { createdAt: "desc" },
        select: { id: true, prefix: true, createdAt: true, revokedAt: true, pendingChangeId: true },
      },
    },
  });
}

/** Revokes the tenant's key if it is not yet revoked; returns how many rows changed (0 or 1). */
export async function revokeKey(db: Db, tenantId: string, keyId: string): Promise<number> {
  return db.$executeRaw`
    UPDATE "ApiKey" SET "revokedAt" = CURRENT_TIMESTAMP
    WHERE "id" = ${keyId} AND "tenantId" = ${tenantId} AND "revokedAt" IS NULL`;
}

/** The tenant's people by name. */
export async function findPeople(db: Client, tenantId: string) {
  return db.user.findMany({
    where: { tenantId },
    orderBy: [{ name: "asc" }, { email: "asc" }],
    select: { id: true, email: true, name: true, role: true, active: true, _count: { select: { passkeys: true } } },
  });
}

/** Ends one live session, or every live session of one person, of the tenant; returns how many it ended. */
export async function endTenantSessions(
  db: Db,
  tenantId: string,
  target: { sessionId: string } | { userId: string },
  reason: string,
): Promise<number> {
  const which =
    "sessionId" in target ? Prisma.sql`"id" = ${target.sessionId}` : Prisma.sql`"userId" = ${target.userId}`;
  return db.$executeRaw`
    UPDATE "Session" SET "endedAt" = CURRENT_TIMESTAMP, "endedReason" = ${reason}
    WHERE ${which} AND "tenantId" = ${tenantId} AND "endedAt" IS NULL`;
}

/** Marks a freshly minted key as waiting for the change that minted it. */
export async function holdKey(db: Db, keyId: string, changeId: string): Promise<void> {
  await db.$executeRaw`UPDATE "ApiKey" SET "pendingChangeId" = ${changeId} WHERE "id" = ${keyId}`;
}

/** Lets the change's key work; returns how many keys it released (0 when the key was revoked meanwhile). */
export async function releaseKey(db: Db, tenantId: string, changeId: string): Promise<number> {
  return db.$executeRaw`
    UPDATE "ApiKey" SET "pendingChangeId" = NULL
    WHERE "pendingChangeId" = ${changeId} AND "tenantId" = ${tenantId} AND "revokedAt" IS NULL`;
}

/** Revokes the key a change minted, when the change will never apply. */
export async function revokeHeldKey(db: Db, changeId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "ApiKey" SET "revokedAt" = CURRENT_TIMESTAMP WHERE "pendingChangeId" = ${changeId} AND "revokedAt" IS NULL`;
}
