import "server-only";
import { z } from "zod";
import { createApiKey } from "../auth/api-keys";
import { consumeStepUp, consumeStepUpFor, type StepUpHolder } from "../auth/step-up";
import { liveSessions } from "../auth/sessions";
import { db, transaction } from "../db";
import { checkOutboundUrl, OutboundRefused } from "../security/outbound";
import { encryptSecret, webhookSecretContext, webhookUrlContext } from "../secrets";
import { classifyAdminChange, loosenedFields, splitPolicyChange } from "./change-rules";
import { holdChange, type HeldChange } from "./changes";
import { parsePolicyValue, POLICY_FIELDS, policyDiff } from "./policy-fields";
import {
  endTenantSessions,
  findAgentsWithKeys,
  findPeople,
  findPolicy,
  findRecentAudit,
  findTenantAgent,
  findTenantName,
  holdKey,
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
export { approveChange, cancelChange, pendingChanges, type HeldChange, type PendingChange } from "./changes";

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
  secondAdminAboveCents: Cents,
  changeDelaySeconds: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 24 * 3600),
  duplicateWindowHours: z.coerce.number().int().min(1).max(720),
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

/** A loosening change the admin has not proved with a step-up made for it; nothing was changed. */
export interface StepUpRequired {
  stepUpRequired: true;
  /** What the change loosens, in the form's words. */
  loosens: string[];
}

/**
 * Changes the tenant's policy numbers and records before and after, in one transaction; a save that changes
 * nothing writes nothing, so the audit list holds only real changes. A change that loosens control (the one
 * classifier: lib/admin/change-rules.ts) consumes the admin's step-up proof for exactly this form (`item`, from
 * `policyItem`), in the same transaction; without one nothing changes. Tightening needs no proof. Numbers the
 * two-admin rule holds (docs/decisions/015) wait as one change; the rest of the save applies at once.
 */
export async function updatePolicy(
  admin: Admin,
  input: PolicyInput,
  proof: { holder: StepUpHolder; item: string },
): Promise<{ policy: PolicyInput; changed: boolean; held: HeldChange | null } | StepUpRequired> {
  return transaction(async (tx) => {
    const before = await lockPolicy(tx, admin.tenantId);
    if (policyDiff(before, input).length === 0) return { policy: before, changed: false, held: null };
    const loosens = loosenedFields(before, input);
    const stepUp = loosens.length > 0 ? await consumeStepUp(tx, proof.holder, "admin.policy", proof.item) : null;
    if (loosens.length > 0 && !stepUp) return { stepUpRequired: true as const, loosens };
    const { now, waiting } = splitPolicyChange(before, input);
    let after = before;
    if (policyDiff(before, now).length > 0) {
      after = await updatePolicyValues(tx, admin.tenantId, now);
      await insertAudit(tx, admin, "policy.updated", { before, after, ...(stepUp ? { stepUp } : {}) });
    }
    const held = waiting ? await holdChange(tx, admin, { kind: "policy", change: waiting, base: after }, stepUp) : null;
    return { policy: after, changed: after !== before, held };
  });
}

/**
 * Withdraws an agent's refund permission at once; a grant consumes the admin's step-up proof for this agent and
 * is held for a second admin (docs/decisions/015). Both audited, and effective on the agent's next call.
 */
export async function setRefundPermission(
  admin: Admin,
  userId: string,
  canRefund: boolean,
  holder: StepUpHolder,
): Promise<"changed" | "unchanged" | "not-found" | "step-up-required" | HeldChange> {
  return transaction(async (tx) => {
    const agent = await findTenantAgent(tx, admin.tenantId, userId);
    if (!agent) return "not-found";
    if (agent.canRefund === canRefund) return "unchanged";
    if (classifyAdminChange({ kind: "refunds", canRefund }) === "needs-second-admin") {
      const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.refunds-granted", userId });
      if (!stepUp) return "step-up-required";
      return holdChange(
        tx,
        admin,
        {
          kind: "refunds",
          change: { userId: agent.id, email: agent.email, canRefund: true },
          base: { canRefund: false },
        },
        stepUp,
      );
    }
    if ((await setCanRefund(tx, admin.tenantId, agent.id, false)) === 0) return "unchanged";
    await insertAudit(tx, admin, "agent.refunds-withdrawn", {
      userId: agent.id,
      email: agent.email,
      before: true,
      after: false,
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
      return {
        ok: false,
        code: error.code,
        message: `The webhook URL cannot be used: ${error.message}. Use the receiver's public address.`,
      };
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

/**
 * A new key for one of the tenant's agents; the key is returned once and only its hash is kept. Consumes the
 * admin's step-up proof for this agent in the same transaction. A key for an agent who may refund works only once
 * a second admin approves it (or its delay passes).
 */
export async function createAgentKey(
  admin: Admin,
  userId: string,
  holder: StepUpHolder,
): Promise<
  | { ok: true; key: string; id: string; held: HeldChange | null }
  | { ok: false; problem: "not-found" | "step-up-required" }
> {
  return transaction(async (tx) => {
    const agent = await findTenantAgent(tx, admin.tenantId, userId);
    if (!agent) return { ok: false as const, problem: "not-found" as const };
    const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.key-created", userId });
    if (!stepUp) return { ok: false as const, problem: "step-up-required" as const };
    const created = await createApiKey(tx, agent);
    if (classifyAdminChange({ kind: "api-key.create", agentCanRefund: agent.canRefund }) === "needs-second-admin") {
      const held = await holdChange(
        tx,
        admin,
        {
          kind: "api-key",
          change: { userId, email: agent.email, keyId: created.id, prefix: created.key.slice(0, 10) },
          base: {},
        },
        stepUp,
      );
      await holdKey(tx, created.id, held.id);
      return { ok: true as const, ...created, held };
    }
    await insertAudit(tx, admin, "api-key.created", { keyId: created.id, userId, stepUp });
    return { ok: true as const, ...created, held: null };
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
  return people.map(({ _count, ...person }) => ({
    ...person,
    passkeys: _count.passkeys,
    sessions: sessions.filter((session) => session.userId === person.id),
  }));
}

/** Ends one session, or every session of one person, of the admin's tenant; recorded in the audit log. */
export async function endSessions(admin: Admin, target: { sessionId: string } | { userId: string }): Promise<number> {
  return transaction(async (tx) => {
    const count = await endTenantSessions(tx, admin.tenantId, target, "ended-by-admin");
    if (count > 0) await insertAudit(tx, admin, "sessions.ended", { ...target, count });
    return count;
  });
}
