"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authedAction } from "@/lib/auth/guards";
import { ruleSummary } from "@/lib/policy-rules/summary";
import { validateRules } from "@/lib/policy-rules/validate";
import { heldWords } from "../changes/words";
import { publishRules, replayRules, withdrawShadowRules } from "./publish";
import { ProofIdSchema } from "@/lib/auth/step-up/step-up";

const RulesText = z.string().max(50_000);

/** Validates a draft against the schema: its errors in words, or what each rule does. */
export const checkRulesAction = authedAction(z.strictObject({ text: RulesText }), ["ADMIN"], async (input) => {
  const validated = validateRules(input.text);
  if (!validated.ok) return { ok: false, code: "rules.invalid", message: validated.errors.join("\n") };
  return { ok: true, data: { summaries: validated.rules.map((rule) => ({ id: rule.id, text: ruleSummary(rule) })) } };
});

export const publishRulesAction = authedAction(
  z.strictObject({
    text: RulesText,
    status: z.enum(["live", "shadow"]),
    proofId: ProofIdSchema.optional(),
  }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = await publishRules(user, { text: input.text, status: input.status }, holder);
    if (!result.ok && result.code === "rules.invalid") {
      return { ok: false, code: result.code, message: result.errors.join("\n") };
    }
    if (!result.ok) {
      return {
        ok: false,
        code: result.code,
        message: `These rules drop or rewrite rules in force (${result.loosened.join(", ")}), which loosens control. Nothing was changed.`,
      };
    }
    revalidatePath("/admin/rules");
    if ("held" in result) return { ok: true, data: { message: heldWords(result.held)! } };
    const { version, status } = result.published;
    return { ok: true, data: { message: `Published version ${version} as ${status}.` } };
  },
);

export const replayRulesAction = authedAction(
  z.strictObject({ text: RulesText, days: z.number().int().min(1).max(90) }),
  ["ADMIN"],
  async (input, user) => {
    const replayed = await replayRules(user.tenantId, input.text, input.days);
    if (!replayed.ok) return { ok: false, code: "rules.invalid", message: replayed.errors.join("\n") };
    return { ok: true, data: replayed.report };
  },
);

export const withdrawShadowAction = authedAction(z.strictObject({}), ["ADMIN"], async (_input, user) => {
  const withdrawn = await withdrawShadowRules(user);
  revalidatePath("/admin/rules");
  return { ok: true, data: { withdrawn } };
});
