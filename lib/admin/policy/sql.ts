import type { Client, Db, Tx } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import { POLICY_FIELDS, type PolicyField } from "./fields";

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

/** Whether the tenant has an approval webhook; throws when there is no such tenant. */
export async function tenantHasWebhook(db: Client, tenantId: string): Promise<boolean> {
  const tenant = await db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { webhookUrl: true } });
  return tenant.webhookUrl !== null;
}
