import "server-only";
import { z } from "zod";
import { createApiKey } from "../auth/api-keys";
import { liveSessions } from "../auth/sessions";
import { db } from "../db";
import { encryptSecret, webhookSecretContext, webhookUrlContext } from "../secrets";
import { Prisma } from "../generated/prisma/client";
import { parsePolicyValue, POLICY_FIELDS, policyDiff } from "./policy-fields";

const Cents = z.coerce.number().int().min(0).max(10_000_000);
export const PolicySchema = z.strictObject({
  autoLimitCents: Cents,
  sessionCapCents: Cents,
  maxAutoWrites: z.coerce.number().int().min(0).max(1000),
  approvalTtlSeconds: z.coerce
    .number()
    .int()
    .min(30)
    .max(7 * 24 * 3600),
  agentDailyCeilingCents: Cents,
  tenantDailyCeilingCents: Cents,
  rateOpenPerMin: z.coerce.number().int().min(1).max(100_000),
  stepUpAboveCents: Cents,
  twoPersonAboveCents: Cents,
  expiryWarningSeconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(24 * 3600),
});
export type PolicyInput = z.infer<typeof PolicySchema>;

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
} as const;

const POLICY_COLUMNS = Prisma.raw(POLICY_FIELDS.map((spec) => `"${spec.name}"`).join(", "));

/** The policy form as typed (money in currency units), checked field by field; errors name each field by its label. */
export function parsePolicyForm(
  typed: Record<string, string>,
): { ok: true; policy: PolicyInput } | { ok: false; message: string } {
  const values: Record<string, number> = {};
  const problems: string[] = [];
  for (const spec of POLICY_FIELDS) {
    const parsed = parsePolicyValue(spec, typed[spec.name] ?? "");
    if (parsed.ok) values[spec.name] = parsed.value;
    else problems.push(parsed.message);
  }
  if (problems.length > 0) return { ok: false, message: problems.join(" ") };
  return { ok: true, policy: PolicySchema.parse(values) };
}

/** The tenant's name, for page titles. */
export async function tenantName(tenantId: string): Promise<string> {
  return (await db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { name: true } })).name;
}

export async function tenantPolicy(tenantId: string) {
  return db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: POLICY_SELECT });
}

interface Admin {
  id: string;
  tenantId: string;
}

async function audit(tx: Prisma.TransactionClient, admin: Admin, action: string, detail: Prisma.InputJsonValue) {
  await tx.auditLog.create({
    data: { tenantId: admin.tenantId, actorId: admin.id, action, detail },
    select: { id: true },
  });
}

/**
 * Changes the tenant's policy numbers and records before and after, in one transaction; a save that changes
 * nothing writes nothing, so the audit list holds only real changes.
 */
export async function updatePolicy(
  admin: Admin,
  input: PolicyInput,
): Promise<{ policy: PolicyInput; changed: boolean }> {
  return db.$transaction(async (tx) => {
    const [before] = await tx.$queryRaw<
      PolicyInput[]
    >`SELECT ${POLICY_COLUMNS} FROM "Tenant" WHERE "id" = ${admin.tenantId} FOR UPDATE`;
    if (policyDiff(before, input).length === 0) return { policy: before, changed: false };
    const after = await tx.tenant.update({ where: { id: admin.tenantId }, data: input, select: POLICY_SELECT });
    await audit(tx, admin, "policy.updated", { before, after });
    return { policy: after, changed: true };
  });
}

/** Grants or withdraws an agent's refund permission (audited); takes effect on the agent's next call. */
export async function setRefundPermission(
  admin: Admin,
  userId: string,
  canRefund: boolean,
): Promise<"changed" | "unchanged" | "not-found"> {
  return db.$transaction(async (tx) => {
    const agent = await tx.user.findFirst({
      where: { id: userId, tenantId: admin.tenantId, role: "AGENT" },
      select: { id: true, email: true, canRefund: true },
    });
    if (!agent) return "not-found";
    const changed = await tx.user.updateMany({
      where: { id: agent.id, tenantId: admin.tenantId, canRefund: !canRefund },
      data: { canRefund },
    });
    if (changed.count === 0) return "unchanged";
    await audit(tx, admin, canRefund ? "agent.refunds-granted" : "agent.refunds-withdrawn", {
      userId: agent.id,
      email: agent.email,
      before: !canRefund,
      after: canRefund,
    });
    return "changed";
  });
}

export const WebhookSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).max(2000),
  secret: z.string().min(16).max(200),
});
export type WebhookInput = z.infer<typeof WebhookSchema>;

/** Sets (or with null, removes) the tenant's approval webhook; URL and secret are stored encrypted, the audit names neither. */
export async function setWebhook(admin: Admin, input: WebhookInput | null) {
  const data = input
    ? {
        webhookUrl: encryptSecret(input.url, webhookUrlContext(admin.tenantId)),
        webhookSecret: encryptSecret(input.secret, webhookSecretContext(admin.tenantId)),
      }
    : { webhookUrl: null, webhookSecret: null };
  await db.$transaction(async (tx) => {
    await tx.tenant.update({ where: { id: admin.tenantId }, data, select: { id: true } });
    await audit(tx, admin, input ? "webhook.set" : "webhook.removed", input ? { host: new URL(input.url).host } : {});
  });
}

export async function hasWebhook(tenantId: string): Promise<boolean> {
  const tenant = await db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { webhookUrl: true } });
  return tenant.webhookUrl !== null;
}

export async function agentKeys(tenantId: string) {
  const agents = await db.user.findMany({
    where: { tenantId, role: "AGENT" },
    orderBy: [{ name: "asc" }, { email: "asc" }],
    select: {
      id: true,
      email: true,
      name: true,
      canRefund: true,
      apiKeys: { orderBy: { createdAt: "desc" }, select: { id: true, prefix: true, createdAt: true, revokedAt: true } },
    },
  });
  return agents;
}

/** A new key for one of the tenant's agents; the key is returned once and only its hash is kept. */
export async function createAgentKey(
  admin: Admin,
  userId: string,
): Promise<{ ok: true; key: string; id: string } | { ok: false }> {
  return db.$transaction(async (tx) => {
    const agent = await tx.user.findFirst({
      where: { id: userId, tenantId: admin.tenantId, role: "AGENT" },
      select: { id: true, tenantId: true },
    });
    if (!agent) return { ok: false as const };
    const created = await createApiKey(tx, agent);
    await audit(tx, admin, "api-key.created", { keyId: created.id, userId });
    return { ok: true as const, ...created };
  });
}

export async function revokeAgentKey(admin: Admin, keyId: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const revoked = await tx.apiKey.updateMany({
      where: { id: keyId, tenantId: admin.tenantId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (revoked.count === 0) return false;
    await audit(tx, admin, "api-key.revoked", { keyId });
    return true;
  });
}

export interface AuditEntry {
  id: bigint;
  action: string;
  actor: string;
  createdAt: Date;
  detail: Record<string, unknown>;
}

/** The tenant's latest admin changes, newest first, with who made each. */
export async function recentAudit(tenantId: string): Promise<AuditEntry[]> {
  return db.$queryRaw<AuditEntry[]>`
    SELECT l."id", l."action", COALESCE(u."name" || ' (' || u."email" || ')', l."actorId") AS "actor", l."createdAt", l."detail"
    FROM "AuditLog" l LEFT JOIN "User" u ON u."id" = l."actorId"
    WHERE l."tenantId" = ${tenantId}
    ORDER BY l."id" DESC
    LIMIT 20`;
}

/** The tenant's people with their live sessions, for the admin to see and end. */
export async function peopleSessions(tenantId: string) {
  const [people, sessions] = await Promise.all([
    db.user.findMany({
      where: { tenantId },
      orderBy: [{ name: "asc" }, { email: "asc" }],
      select: { id: true, email: true, name: true, role: true, active: true },
    }),
    liveSessions(tenantId),
  ]);
  return people.map((person) => ({ ...person, sessions: sessions.filter((session) => session.userId === person.id) }));
}

/** Ends one session, or every session of one person, of the admin's tenant; recorded in the audit log. */
export async function endSessions(admin: Admin, target: { sessionId: string } | { userId: string }): Promise<number> {
  return db.$transaction(async (tx) => {
    const where = "sessionId" in target ? { id: target.sessionId } : { userId: target.userId };
    const ended = await tx.session.updateMany({
      where: { ...where, tenantId: admin.tenantId, endedAt: null },
      data: { endedAt: new Date(), endedReason: "ended-by-admin" },
    });
    if (ended.count > 0) await audit(tx, admin, "sessions.ended", { ...target, count: ended.count });
    return ended.count;
  });
}
