import "server-only";
import { z } from "zod";
import { createApiKey } from "./auth/api-keys";
import { db } from "./db";
import type { Prisma } from "./generated/prisma/client";

const Cents = z.coerce.number().int().min(0).max(10_000_000);
export const PolicySchema = z.strictObject({
  autoLimitCents: Cents,
  sessionCapCents: Cents,
  maxAutoWrites: z.coerce.number().int().min(0).max(1000),
  approvalTtlSeconds: z.coerce.number().int().min(30).max(7 * 24 * 3600),
  stepUpAboveCents: Cents.optional(),
  twoPersonAboveCents: Cents.optional(),
  expiryWarningSeconds: z.coerce.number().int().min(0).max(24 * 3600).optional(),
});
export type PolicyInput = z.infer<typeof PolicySchema>;

const POLICY_SELECT = {
  autoLimitCents: true,
  sessionCapCents: true,
  maxAutoWrites: true,
  approvalTtlSeconds: true,
  stepUpAboveCents: true,
  twoPersonAboveCents: true,
  expiryWarningSeconds: true,
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
