"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authedAction } from "@/lib/auth/guards";
import { policyItem, ProofIdSchema } from "@/lib/auth/step-up/step-up";
import { heldWords, STEP_UP_REQUIRED } from "../changes/words";
import { parsePolicyForm, updatePolicy } from "./numbers";
import { setWebhook, WebhookSchema } from "./webhook";

const Typed = z.string().max(30);
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
  z.strictObject({ policy: PolicyFormSchema, proofId: ProofIdSchema.optional() }),
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

/** A URL and secret to set (with the proof made for that URL), or null to remove the webhook. */
export const setWebhookAction = authedAction(
  WebhookSchema.extend({ proofId: ProofIdSchema.optional() }).nullable(),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input?.proofId };
    const saved = await setWebhook(user, input && { url: input.url, secret: input.secret }, holder);
    if (!saved.ok) return saved;
    revalidatePath("/admin/policy");
    return { ok: true, data: { held: heldWords(saved.held) } };
  },
);
