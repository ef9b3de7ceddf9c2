import "server-only";
import { z } from "zod";
import { createApiKey } from "./auth/api-keys";
import { liveSessions } from "./auth/sessions";
import { db } from "./db";
import { encryptSecret, webhookSecretContext, webhookUrlContext } from "./secrets";
import type { Prisma } from "./generated/prisma/client";

const Cents = z.coerce.number().int().min(0).max(10_000_000);
export const PolicySchema = z.strictObject({
  autoLimitCents: Cents,
  sessionCapCents: Cents,
  maxAutoWrites: z.coerce.number().int().min(0).max(1000),
  approvalTtlSeconds: z.coerce.number().int().min(30).max(7 * 24 * 3600),
  agentDailyCeilingCents: Cents,
  tenantDailyCeilingCents: Cents,
  rateOpenPerMin: z.coerce.number().int().min(1).max(100_000),
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
} as const;

export async function tenantPolicy(tenantId: string) {
  return db.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: POLICY_SELECT });
}

interface Admin {
  id: string;
  tenantId: string;
}

async function audit(tx: Prisma.TransactionClient, admin: Admin, action: string, detail: Prisma.InputJsonValue) {
  await tx.auditLog.create({ data: { tenantId: admin.tenantId, actorId: admin.id, action, detail }, select: { id: true } });
}

/** Changes the tenant's policy numbers and records before and after, in one transaction. */
export async function updatePolicy(admin: Admin, input: PolicyInput) {
  return db.$transaction(async (tx) => {
    const before = await tx.tenant.findUniqueOrThrow({ where: { id: admin.tenantId }, select: POLICY_SELECT });
    const after = await tx.tenant.update({ where: { id: admin.tenantId }, data: input, select: POLICY_SELECT });
    await audit(tx, admin, "policy.updated", { before, after });
    return after;
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
    ? { webhookUrl: encryptSecret(input.url, webhookUrlContext(admin.tenantId)), webhookSecret: encryptSecret(input.secret, webhookSecretContext(admin.tenantId)) }
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
    orderBy: { email: "asc" },
    select: { id: true, email: true, canRefund: true, apiKeys: { orderBy: { createdAt: "desc" }, select: { id: true, prefix: true, createdAt: true, revokedAt: true } } },
  });
  return agents;
}

/** A new key for one of the tenant's agents; the key is returned once and only its hash is kept. */
export async function createAgentKey(admin: Admin, userId: string): Promise<{ ok: true; key: string; id: string } | { ok: false }> {
  return db.$transaction(async (tx) => {
    const agent = await tx.user.findFirst({ where: { id: userId, tenantId: admin.tenantId, role: "AGENT" }, select: { id: true, tenantId: true } });
    if (!agent) return { ok: false as const };
    const created = await createApiKey(tx, agent);
    await audit(tx, admin, "api-key.created", { keyId: created.id, userId });
    return { ok: true as const, ...created };
  });
}

export async function revokeAgentKey(admin: Admin, keyId: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const revoked = await tx.apiKey.updateMany({ where: { id: keyId, tenantId: admin.tenantId, revokedAt: null }, data: { revokedAt: new Date() } });
    if (revoked.count === 0) return false;
    await audit(tx, admin, "api-key.revoked", { keyId });
    return true;
  });
}

export async function recentAudit(tenantId: string) {
  return db.auditLog.findMany({ where: { tenantId }, orderBy: { id: "desc" }, take: 20 });
}

/** The tenant's people with their live sessions, for the admin to see and end. */
export async function peopleSessions(tenantId: string) {
  const [people, sessions] = await Promise.all([
    db.user.findMany({ where: { tenantId }, orderBy: { email: "asc" }, select: { id: true, email: true, role: true, active: true } }),
    liveSessions(tenantId),
  ]);
  return people.map((person) => ({ ...person, sessions: sessions.filter((session) => session.userId === person.id) }));
}

/** Ends one session, or every session of one person, of the admin's tenant; recorded in the audit log. */
export async function endSessions(admin: Admin, target: { sessionId: string } | { userId: string }): Promise<number> {
  return db.$transaction(async (tx) => {
    const where = "sessionId" in target ? { id: target.sessionId } : { userId: target.userId };
    const ended = await tx.session.updateMany({ where: { ...where, tenantId: admin.tenantId, endedAt: null }, data: { endedAt: new Date(), endedReason: "ended-by-admin" } });
    if (ended.count > 0) await audit(tx, admin, "sessions.ended", { ...target, count: ended.count });
    return ended.count;
  });
}
