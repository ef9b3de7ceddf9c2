import { z } from "zod";
import { consumeStepUp, type StepUpHolder } from "../../auth/step-up/step-up";
import { db, transaction } from "../../db";
import { loosenedFields, splitPolicyChange } from "../changes/loosening/loosening";
import { holdChange, type HeldChange } from "../changes/two-admin";
import { parsePolicyValue, POLICY_FIELDS, policyDiff, type PolicyField } from "./fields";
import { findPolicy, lockPolicy, updatePolicyValues } from "./sql";
import { insertAudit, type Admin } from "../sql";

const Cents = z.coerce.number().int().min(0).max(10_000_000);
const labelOf = (name: PolicyField) => POLICY_FIELDS.find((spec) => spec.name === name)!.label;
/** A connection cannot end later for being idle than for its age: the absolute lifetime is at least the idle one. */
const LIFETIMES_MESSAGE = `${labelOf("oauthRefreshMaxDays")} must be at least ${labelOf("oauthRefreshIdleDays")}: raise the first or lower the second.`;

export const PolicySchema = z
  .strictObject({
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
    oauthRefreshIdleDays: z.coerce.number().int().min(1).max(365),
    oauthRefreshMaxDays: z.coerce.number().int().min(1).max(730),
  })
  .refine((policy) => policy.oauthRefreshMaxDays >= policy.oauthRefreshIdleDays, {
    message: LIFETIMES_MESSAGE,
    path: ["oauthRefreshMaxDays"],
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
  const policy = PolicySchema.safeParse(values);
  if (!policy.success) return { ok: false, message: policy.error.issues.map((issue) => issue.message).join(" ") };
  return { ok: true, policy: policy.data };
}

export async function tenantPolicy(tenantId: string) {
  return findPolicy(db, tenantId);
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
 * classifier: lib/admin/changes/loosening/loosening.ts) consumes the admin's step-up proof for exactly this form (`item`, from
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
