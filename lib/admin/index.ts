import "server-only";
import { z } from "zod";
import { createApiKey } from "../auth/api-keys";
import { liveSessions } from "../auth/sessions";
import { db, transaction } from "../db";
import { checkOutboundUrl, OutboundRefused } from "../security/outbound";
import { encryptSecret, webhookSecretContext, webhookUrlContext } from "../secrets";
import { parsePolicyValue, POLICY_FIELDS, policyDiff } from "./policy-fields";
import {
  endTenantSessions,
  findAgentsWithKeys,
  findPeople,
  findPolicy,
  findRecentAudit,
  findTenantAgent,
  findTenantName,
  insertAudit,
  lockPolicy,
  revokeKey,
  setCanRefund,
  setTenantWebhook,
  tenantHasWebhook,
  updatePolicyValues,
  type AuditEntry,
} from "./sql";

export type { AuditEntry } from "./sql";

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
  return findTenantName(db, tenantId);
}

export async function tenantPolicy(tenantId: string) {
  return findPolicy(db, tenantId);
}

interface Admin {
  id: string;
  tenantId: string;
}

/**
 * Changes the tenant's policy numbers and records before and after, in one transaction; a save that changes
 * nothing writes nothing, so the audit list holds only real changes.
 */
export async function updatePolicy(
  admin: Admin,
  input: PolicyInput,
): Promise<{ policy: PolicyInput; changed: boolean }> {
  return transaction(async (tx) => {
    const before = await lockPolicy(tx, admin.tenantId);
    if (policyDiff(before, input).length === 0) return { policy: before, changed: false };
    const after = await updatePolicyValues(tx, admin.tenantId, input);
    await insertAudit(tx, admin, "policy.updated", { before, after });
    return { policy: after, changed: true };
  });
}

/** Grants or withdraws an agent's refund permission (audited); takes effect on the agent's next call. */
export async function setRefundPermission(
  admin: Admin,
  userId: string,
  canRefund: boolean,
): Promise<"changed" | "unchanged" | "not-found"> {
  return transaction(async (tx) => {
    const agent = await findTenantAgent(tx, admin.tenantId, userId);
    if (!agent) return "not-found";
    if ((await setCanRefund(tx, admin.tenantId, agent.id, canRefund)) === 0) return "unchanged";
    await insertAudit(tx, admin, canRefund ? "agent.refunds-granted" : "agent.refunds-withdrawn", {
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

/**
 * Sets (or with null, removes) the tenant's approval webhook; URL and secret are stored encrypted, the audit names
 * neither. A URL reaching a loopback, private, link-local or metadata address is refused and nothing is stored.
 */
export async function setWebhook(
  admin: Admin,
  input: WebhookInput | null,
): Promise<{ ok: true } | { ok: false; code: OutboundRefused["code"]; message: string }> {
  if (input) {
    try {
      await checkOutboundUrl(input.url);
    } catch (error) {
      if (!(error instanceof OutboundRefused)) throw error;
      return { ok: false, code: error.code, message: `The webhook URL cannot be used: ${error.message}.` };
    }
  }
  const data = input
    ? {
        webhookUrl: encryptSecret(input.url, webhookUrlContext(admin.tenantId)),
        webhookSecret: encryptSecret(input.secret, webhookSecretContext(admin.tenantId)),
      }
    : { webhookUrl: null, webhookSecret: null };
  await transaction(async (tx) => {
    await setTenantWebhook(tx, admin.tenantId, data);
    await insertAudit(
      tx,
      admin,
      input ? "webhook.set" : "webhook.removed",
      input ? { host: new URL(input.url).host } : {},
    );
  });
  return { ok: true };
}

export async function hasWebhook(tenantId: string): Promise<boolean> {
  return tenantHasWebhook(db, tenantId);
}

export async function agentKeys(tenantId: string) {
  return findAgentsWithKeys(db, tenantId);
}

/** A new key for one of the tenant's agents; the key is returned once and only its hash is kept. */
export async function createAgentKey(
  admin: Admin,
  userId: string,
): Promise<{ ok: true; key: string; id: string } | { ok: false }> {
  return transaction(async (tx) => {
    const agent = await findTenantAgent(tx, admin.tenantId, userId);
    if (!agent) return { ok: false as const };
    const created = await createApiKey(tx, agent);
    await insertAudit(tx, admin, "api-key.created", { keyId: created.id, userId });
    return { ok: true as const, ...created };
  });
}

export async function revokeAgentKey(admin: Admin, keyId: string): Promise<boolean> {
  return transaction(async (tx) => {
    if ((await revokeKey(tx, admin.tenantId, keyId)) === 0) return false;
    await insertAudit(tx, admin, "api-key.revoked", { keyId });
    return true;
  });
}

/** The tenant's latest admin changes, newest first, with who made each. */
export async function recentAudit(tenantId: string): Promise<AuditEntry[]> {
  return findRecentAudit(db, tenantId);
}

/** The tenant's people with their live sessions, for the admin to see and end. */
export async function peopleSessions(tenantId: string) {
  const [people, sessions] = await Promise.all([findPeople(db, tenantId), liveSessions(tenantId)]);
  return people.map((person) => ({ ...person, sessions: sessions.filter((session) => session.userId === person.id) }));
}

/** Ends one session, or every session of one person, of the admin's tenant; recorded in the audit log. */
export async function endSessions(admin: Admin, target: { sessionId: string } | { userId: string }): Promise<number> {
  return transaction(async (tx) => {
    const count = await endTenantSessions(tx, admin.tenantId, target, "ended-by-admin");
    if (count > 0) await insertAudit(tx, admin, "sessions.ended", { ...target, count });
    return count;
  });
}
