import "server-only";
import type { Client, Db, Tx } from "../db";
import { Prisma } from "../generated/prisma/client";
import { POLICY_FIELDS, type PolicyField } from "./policy-fields";

// The admin module's statements: the tenant's policy and webhook, its agents and their keys, its people's
// sessions, and the audit log of the admin's changes.

export type PolicyValues = Record<PolicyField, number>;

const POLICY_SELECT = {
  autoLimitCents: true,
  sessionCapCents: true,
  maxAutoWrites: true,
  approvalTtlSeconds: true,
  agentDailyCeilingCents: true,
  tenantDailyCeilingCents: true,
  rateOpenPerMin: true,
  stepUpAboveCents: true,
  twoPersonAboveCents: true,
  expiryWarningSeconds: true,
  duplicateWindowHours: true,
} as const satisfies Record<PolicyField, true>;

const POLICY_COLUMNS = Prisma.raw(POLICY_FIELDS.map((spec) => `"${spec.name}"`).join(", "));

/** The tenant's name; throws when there is no such tenant. */
export async function findTenantName(db: Client, tenantId: string): Promise<string> {
  return (await db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { name: true } })).name;
}

/** The tenant's policy numbers; throws when there is no such tenant. */
export async function findPolicy(db: Client, tenantId: string) {
  return db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: POLICY_SELECT });
}

/** Locks the tenant's row and returns its policy numbers. */
export async function lockPolicy(tx: Tx, tenantId: string): Promise<PolicyValues> {
  const [policy] = await tx.$queryRaw<PolicyValues[]>`
    SELECT ${POLICY_COLUMNS} FROM "Tenant" WHERE "id" = ${tenantId} FOR UPDATE`;
  return policy;
}

/** Sets the tenant's policy numbers; returns them as stored. */
export async function updatePolicyValues(db: Db, tenantId: string, policy: PolicyValues): Promise<PolicyValues> {
  const assignments = Prisma.join(
    POLICY_FIELDS.map((spec) => Prisma.sql`${Prisma.raw(`"${spec.name}"`)} = ${policy[spec.name]}`),
  );
  const [after] = await db.$queryRaw<PolicyValues[]>`
    UPDATE "Tenant" SET ${assignments} WHERE "id" = ${tenantId} RETURNING ${POLICY_COLUMNS}`;
  return after;
}

/** Records one change made by an admin in the tenant's audit log. */
export async function insertAudit(
  db: Db,
  admin: { id: string; tenantId: string },
  action: string,
  detail: unknown,
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "AuditLog" ("tenantId", "actorId", "action", "detail")
    VALUES (${admin.tenantId}, ${admin.id}, ${action}, ${JSON.stringify(detail)}::jsonb)`;
}

/** The tenant's agent with this id (with its email and refund permission), or undefined. */
export async function findTenantAgent(
  db: Db,
  tenantId: string,
  userId: string,
): Promise<{ id: string; tenantId: string; email: string; canRefund: boolean } | undefined> {
  const [agent] = await db.$queryRaw<{ id: string; tenantId: string; email: string; canRefund: boolean }[]>`
    SELECT "id", "tenantId", "email", "canRefund" FROM "User"
    WHERE "id" = ${userId} AND "tenantId" = ${tenantId} AND "role" = 'AGENT'
    LIMIT 1`;
  return agent;
}

/** Sets the agent's refund permission if it differs; returns how many rows changed (0 or 1). */
export async function setCanRefund(db: Db, tenantId: string, userId: string, canRefund: boolean): Promise<number> {
  return db.$executeRaw`
    UPDATE "User" SET "canRefund" = ${canRefund}
    WHERE "id" = ${userId} AND "tenantId" = ${tenantId} AND "canRefund" = ${!canRefund}`;
}

/** Sets the tenant's encrypted webhook URL and secret (both null to remove it). */
export async function setTenantWebhook(
  db: Db,
  tenantId: string,
  webhook: { webhookUrl: string | null; webhookSecret: string | null },
): Promise<void> {
  await db.$executeRaw`
    UPDATE "Tenant" SET "webhookUrl" = ${webhook.webhookUrl}::text, "webhookSecret" = ${webhook.webhookSecret}::text
    WHERE "id" = ${tenantId}`;
}

/** Whether the tenant has an approval webhook; throws when there is no such tenant. */
export async function tenantHasWebhook(db: Client, tenantId: string): Promise<boolean> {
  const tenant = await db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { webhookUrl: true } });
  return tenant.webhookUrl !== null;
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
        select: { id: true, prefix: true, createdAt: true, revokedAt: true },
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

export interface AuditEntry {
  id: bigint;
  action: string;
  actor: string;
  createdAt: Date;
  detail: Record<string, unknown>;
}

/** The tenant's latest 20 audit entries, newest first, each naming who made it. */
export async function findRecentAudit(db: Db, tenantId: string): Promise<AuditEntry[]> {
  return db.$queryRaw<AuditEntry[]>`
    SELECT l."id", l."action", COALESCE(u."name" || ' (' || u."email" || ')', l."actorId") AS "actor", l."createdAt", l."detail"
    FROM "AuditLog" l LEFT JOIN "User" u ON u."id" = l."actorId"
    WHERE l."tenantId" = ${tenantId}
    ORDER BY l."id" DESC
    LIMIT 20`;
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
