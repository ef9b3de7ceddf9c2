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
  secondAdminAboveCents: true,
  changeDelaySeconds: true,
  duplicateWindowHours: true,
  oauthRefreshIdleDays: true,
  oauthRefreshMaxDays: true,
} as const satisfies Record<PolicyField, true>;

const POLICY_COLUMNS = Prisma.raw(POLICY_FIELDS.map((spec) => `"${spec.name}"`).join(", "));

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

/** The admin making a change: who, and the tenant every statement is scoped to. */
export interface Admin {
  id: string;
  tenantId: string;
}

export async function insertAudit(db: Db, admin: Admin, action: string, detail: unknown): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "AuditLog" ("tenantId", "actorId", "action", "detail")
    VALUES (${admin.tenantId}, ${admin.id}, ${action}, ${JSON.stringify(detail)}::jsonb)`;
}

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

/** Locks the tenant's row and returns its stored (encrypted) webhook URL, or null when none is set. */
export async function lockTenantWebhook(tx: Tx, tenantId: string): Promise<string | null> {
  const [row] = await tx.$queryRaw<{ webhookUrl: string | null }[]>`
    SELECT "webhookUrl" FROM "Tenant" WHERE "id" = ${tenantId} FOR UPDATE`;
  return row.webhookUrl;
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

export interface AdminChangeRow {
  id: string;
  tenantId: string;
  kind: string;
  change: Record<string, unknown>;
  base: Record<string, unknown>;
  digest: string;
  proposedById: string;
  mode: "second-admin" | "delay";
  status: string;
  applyAt: Date | null;
  expiresAt: Date;
}

const CHANGE_COLUMNS = Prisma.sql`"id", "tenantId", "kind", "change", "base", "digest", "proposedById", "mode", "status", "applyAt", "expiresAt"`;

/** The tenant's active supervisors and admins: who hears of a waiting change, and how many admins there are. */
export async function findOverseers(
  db: Db,
  tenantId: string,
): Promise<{ id: string; email: string; role: "SUPERVISOR" | "ADMIN" }[]> {
  return db.$queryRaw`
    SELECT "id", "email", "role"::text AS "role" FROM "User"
    WHERE "tenantId" = ${tenantId} AND "active" AND "role" IN ('SUPERVISOR', 'ADMIN')
    ORDER BY "id"`;
}

export async function insertAdminChange(
  db: Db,
  row: Omit<AdminChangeRow, "status"> & { createdAt: Date },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "AdminChange" ("id", "tenantId", "kind", "change", "base", "digest", "proposedById", "mode", "status",
      "applyAt", "expiresAt", "createdAt")
    VALUES (${row.id}, ${row.tenantId}, ${row.kind}, ${JSON.stringify(row.change)}::jsonb,
      ${JSON.stringify(row.base)}::jsonb, ${row.digest}, ${row.proposedById}, ${row.mode}, 'pending',
      ${row.applyAt}::timestamptz, ${row.expiresAt}, ${row.createdAt})`;
}

/** Locks the tenant's change with this id; null for a missing or foreign id. */
export async function lockAdminChange(tx: Tx, tenantId: string, id: string): Promise<AdminChangeRow | null> {
  const [row] = await tx.$queryRaw<AdminChangeRow[]>`
    SELECT ${CHANGE_COLUMNS} FROM "AdminChange" WHERE "id" = ${id} AND "tenantId" = ${tenantId} FOR UPDATE`;
  return row ?? null;
}

/** Locks delayed changes whose delay has passed (skipping rows another instance holds). */
export async function lockDueDelayedChanges(tx: Tx, limit: number): Promise<AdminChangeRow[]> {
  return tx.$queryRaw<AdminChangeRow[]>`
    SELECT ${CHANGE_COLUMNS} FROM "AdminChange"
    WHERE "status" = 'pending' AND "mode" = 'delay' AND "applyAt" <= now()
    ORDER BY "applyAt" LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
}

/** Ends a pending change (single use: only a row still pending moves); returns how many rows moved (0 or 1). */
export async function closeAdminChange(
  db: Db,
  id: string,
  status: "applied" | "cancelled" | "expired" | "superseded",
  decidedById: string | null,
): Promise<number> {
  return db.$executeRaw`
    UPDATE "AdminChange" SET "status" = ${status}, "decidedById" = ${decidedById}, "decidedAt" = now()
    WHERE "id" = ${id} AND "status" = 'pending'`;
}

/** Expires changes waiting for a second admin past their expiry; returns the ids it expired. */
export async function expireAdminChanges(db: Db): Promise<{ id: string; tenantId: string; proposedById: string }[]> {
  return db.$queryRaw`
    UPDATE "AdminChange" SET "status" = 'expired', "decidedAt" = now()
    WHERE "status" = 'pending' AND "mode" = 'second-admin' AND "expiresAt" <= now()
    RETURNING "id", "tenantId", "proposedById"`;
}

export interface PendingChangeEntry extends AdminChangeRow {
  proposer: string;
  createdAt: Date;
}

/** The tenant's changes still waiting, oldest first, each naming who proposed it. */
export async function findPendingChanges(db: Db, tenantId: string): Promise<PendingChangeEntry[]> {
  return db.$queryRaw<PendingChangeEntry[]>`
    SELECT c."id", c."tenantId", c."kind", c."change", c."base", c."digest", c."proposedById", c."mode", c."status",
      c."applyAt", c."expiresAt", c."createdAt", u."name" || ' (' || u."email" || ')' AS "proposer"
    FROM "AdminChange" c JOIN "User" u ON u."id" = c."proposedById"
    WHERE c."tenantId" = ${tenantId} AND c."status" = 'pending'
    ORDER BY c."createdAt", c."id"`;
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

/** The tenant's rule sets in force, the tenant row locked until the transaction ends (publishing is one at a time). */
export async function lockRuleSets(
  tx: Tx,
  tenantId: string,
): Promise<{ liveRuleSetId: string | null; shadowRuleSetId: string | null; liveText: string | null }> {
  const [row] = await tx.$queryRaw<
    { liveRuleSetId: string | null; shadowRuleSetId: string | null; liveText: string | null }[]
  >`
    SELECT t."liveRuleSetId", t."shadowRuleSetId", r."text" AS "liveText"
    FROM "Tenant" t LEFT JOIN "PolicyRuleSet" r ON r."id" = t."liveRuleSetId"
    WHERE t."id" = ${tenantId} FOR UPDATE OF t`;
  return row;
}

/** Stores a rule set as the tenant's next version and puts it in force as `status`; returns its version. */
export async function insertRuleSet(
  tx: Tx,
  set: { id: string; tenantId: string; status: "live" | "shadow"; text: string; createdById: string },
): Promise<number> {
  const [row] = await tx.$queryRaw<{ version: number }[]>`
    INSERT INTO "PolicyRuleSet" ("id", "tenantId", "version", "status", "text", "createdById")
    SELECT ${set.id}, ${set.tenantId}, COALESCE(MAX("version"), 0) + 1, ${set.status}, ${set.text}, ${set.createdById}
    FROM "PolicyRuleSet" WHERE "tenantId" = ${set.tenantId}
    RETURNING "version"`;
  await (set.status === "live"
    ? tx.$executeRaw`UPDATE "Tenant" SET "liveRuleSetId" = ${set.id} WHERE "id" = ${set.tenantId}`
    : tx.$executeRaw`UPDATE "Tenant" SET "shadowRuleSetId" = ${set.id} WHERE "id" = ${set.tenantId}`);
  return row.version;
}

/** Stops evaluating the tenant's shadow rule set; false when it had none. */
export async function clearShadowRuleSet(tx: Tx, tenantId: string): Promise<boolean> {
  const count = await tx.$executeRaw`
    UPDATE "Tenant" SET "shadowRuleSetId" = NULL WHERE "id" = ${tenantId} AND "shadowRuleSetId" IS NOT NULL`;
  return count > 0;
}

export interface RuleSetVersion {
  id: string;
  version: number;
  status: string;
  text: string;
  createdAt: Date;
  author: string;
}

/** The tenant's rule set versions, newest first, with who published each. */
export async function findRuleSetVersions(db: Db, tenantId: string, limit: number): Promise<RuleSetVersion[]> {
  return db.$queryRaw<RuleSetVersion[]>`
    SELECT r."id", r."version", r."status", r."text", r."createdAt", COALESCE(u."email", r."createdById") AS "author"
    FROM "PolicyRuleSet" r LEFT JOIN "User" u ON u."id" = r."createdById"
    WHERE r."tenantId" = ${tenantId}
    ORDER BY r."version" DESC LIMIT ${limit}`;
}

/** Decision-log rows since `since` that kept the facts their rules read, newest first, at most `limit`. */
export async function findRuleDecisions(
  db: Db,
  tenantId: string,
  since: Date,
  limit: number,
): Promise<{ callId: string; at: Date; rules: Record<string, unknown> }[]> {
  return db.$queryRaw`
    SELECT "toolCallId" AS "callId", "createdAt" AS "at", "detail"->'rules' AS "rules"
    FROM "DecisionLog"
    WHERE "tenantId" = ${tenantId} AND "createdAt" >= ${since} AND "detail" ? 'rules' AND "toolCallId" IS NOT NULL
    ORDER BY "id" DESC LIMIT ${limit}`;
}

/** The tenant's rule sets in force. */
export async function findTenantRuleSets(
  db: Db,
  tenantId: string,
): Promise<{ liveRuleSetId: string | null; shadowRuleSetId: string | null }> {
  const [row] = await db.$queryRaw<{ liveRuleSetId: string | null; shadowRuleSetId: string | null }[]>`
    SELECT "liveRuleSetId", "shadowRuleSetId" FROM "Tenant" WHERE "id" = ${tenantId}`;
  return row;
}
