"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { createAgentKey, revokeAgentKey } from "@/lib/admin/access/agent-keys";
import { endSessions } from "@/lib/admin/access/people";
import { parsePolicyForm, updatePolicy } from "@/lib/admin/policy/numbers";
import { setRefundPermission } from "@/lib/admin/access/refund-permission";
import { setSelfRegistration } from "@/lib/admin/access/self-registration";
import { setWebhook, WebhookSchema } from "@/lib/admin/policy/webhook";
import { heldWords } from "@/lib/admin/changes/words";
import { authedAction } from "@/lib/auth/guards";
import { policyItem } from "@/lib/auth/step-up/step-up";
import { IdSchema } from "@/lib/security/input";

const Typed = z.string().max(30);
/** The step-up proof for this change, made in this session (decision 014); only loosening changes need one. */
const ProofId = z.string().min(1).max(100).optional();

const STEP_UP_REQUIRED = "step-up.required";
const PolicyFormSchema = z.strictObject({
  autoLimitCents: Typed,
  sessionCapCents: Typed,
  maxAutoWrites: Typed,
  approvalTtlSeconds: Typed,
  agentDailyCeilingCents: Typed,
  tenantDailyCeilingCents: Typed,
  rateOpenPerMin: Typed,
  stepUpAboveCents: Typed,
  twoPersonAboveCents: Typed,
  expiryWarningSeconds: Typed,
  secondAdminAboveCents: Typed,
  changeDelaySeconds: Typed,
  duplicateWindowHours: Typed,
  oauthRefreshIdleDays: Typed,
  oauthRefreshMaxDays: Typed,
});

/** The form as typed (money in currency units); errors come back in words, naming each field by its label. */
export const updatePolicyAction = authedAction(
  z.strictObject({ policy: PolicyFormSchema, proofId: ProofId }),
  ["ADMIN"],
  async (input, user, session) => {
    const parsed = parsePolicyForm(input.policy);
    if (!parsed.ok) return { ok: false, code: "input.invalid", message: parsed.message };
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const saved = await updatePolicy(user, parsed.policy, { holder, item: policyItem(input.policy) });
    if ("stepUpRequired" in saved) {
      return {
        ok: false,
        code: STEP_UP_REQUIRED,
        message: `This change loosens control (${saved.loosens.join(", ")}). Nothing was changed.`,
      };
    }
    revalidatePath("/admin/policy");
    return { ok: true, data: { ...saved, held: heldWords(saved.held) } };
  },
);

export const setRefundPermissionAction = authedAction(
  z.strictObject({ userId: IdSchema, canRefund: z.boolean(), proofId: ProofId }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = await setRefundPermission(user, input.userId, input.canRefund, holder);
    if (result === "not-found") return { ok: false, code: "not-found", message: "No such agent in your tenant." };
    if (result === "step-up-required") {
      return {
        ok: false,
        code: STEP_UP_REQUIRED,
        message: "Granting refunds needs you to confirm it is you first. Nothing was changed.",
      };
    }
    revalidatePath("/admin/policy");
    if (typeof result === "object") return { ok: true, data: { changed: false, held: heldWords(result) } };
    return { ok: true, data: { changed: result === "changed", held: null } };
  },
);

export const createKeyAction = authedAction(
  z.strictObject({ userId: IdSchema, proofId: ProofId }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const created = await createAgentKey(user, input.userId, holder);
    if (!created.ok && created.problem === "not-found")
      return { ok: false, code: "not-found", message: "No such agent in your tenant." };
    if (!created.ok) {
      return {
        ok: false,
        code: STEP_UP_REQUIRED,
        message: "Creating a key needs you to confirm it is you first. No key was created.",
      };
    }
    revalidatePath("/admin/policy");
    return { ok: true, data: { id: created.id, key: created.key, held: heldWords(created.held) } };
  },
);

export const revokeKeyAction = authedAction(z.strictObject({ keyId: IdSchema }), ["ADMIN"], async (input, user) => {
  if (!(await revokeAgentKey(user, input.keyId)))
    return { ok: false, code: "not-found", message: "No such active key in your tenant." };
  revalidatePath("/admin/policy");
  return { ok: true, data: undefined };
});

const EndSessionsSchema = z.union([z.strictObject({ sessionId: IdSchema }), z.strictObject({ userId: IdSchema })]);

export const endSessionsAction = authedAction(EndSessionsSchema, ["ADMIN"], async (input, user) => {
  const count = await endSessions(user, input);
  if (count === 0) return { ok: false, code: "not-found", message: "No such live session in your tenant." };
  revalidatePath("/admin/policy");
  return { ok: true, data: { count } };
});

/** A URL and secret to set (with the proof made for that URL), or null to remove the webhook. */
export const setWebhookAction = authedAction(
  WebhookSchema.extend({ proofId: ProofId }).nullable(),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input?.proofId };
    const saved = await setWebhook(user, input && { url: input.url, secret: input.secret }, holder);
    if (!saved.ok) return saved;
    revalidatePath("/admin/policy");
    return { ok: true, data: { held: heldWords(saved.held) } };
  },
);

export const setSelfRegistrationAction = authedAction(
  z.strictObject({ enabled: z.boolean(), proofId: ProofId }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = await setSelfRegistration(user, input.enabled, holder);
    if (result === "step-up-required") {
      return {
        ok: false,
        code: STEP_UP_REQUIRED,
        message: "Allowing clients that register themselves needs you to confirm it is you first. Nothing was changed.",
      };
    }
    revalidatePath("/admin/policy");
    return { ok: true, data: { held: typeof result === "object" ? heldWords(result) : null } };
  },
);
