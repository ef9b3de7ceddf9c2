"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { createAgentKey, parsePolicyForm, revokeAgentKey, setRefundPermission, updatePolicy } from "@/lib/admin";
import { authedAction } from "@/lib/auth/guards";

const Typed = z.string().max(30);
const PolicyFormSchema = z.strictObject({ autoLimitCents: Typed, sessionCapCents: Typed, maxAutoWrites: Typed, approvalTtlSeconds: Typed });

/** The form as typed (money in currency units); errors come back in words, naming each field by its label. */
export const updatePolicyAction = authedAction(PolicyFormSchema, ["ADMIN"], async (input, user) => {
  const parsed = parsePolicyForm(input);
  if (!parsed.ok) return { ok: false, code: "input.invalid", message: parsed.message };
  const saved = await updatePolicy(user, parsed.policy);
  revalidatePath("/admin/policy");
  return { ok: true, data: saved };
});

export const setRefundPermissionAction = authedAction(
  z.strictObject({ userId: z.string().min(1).max(100), canRefund: z.boolean() }),
  ["ADMIN"],
  async (input, user) => {
    const result = await setRefundPermission(user, input.userId, input.canRefund);
    if (result === "not-found") return { ok: false, code: "not-found", message: "No such agent in your tenant." };
    revalidatePath("/admin/policy");
    return { ok: true, data: { changed: result === "changed" } };
  },
);

export const createKeyAction = authedAction(z.strictObject({ userId: z.string().min(1).max(100) }), ["ADMIN"], async (input, user) => {
  const created = await createAgentKey(user, input.userId);
  if (!created.ok) return { ok: false, code: "not-found", message: "No such agent in your tenant." };
  revalidatePath("/admin/policy");
  return { ok: true, data: { id: created.id, key: created.key } };
});

export const revokeKeyAction = authedAction(z.strictObject({ keyId: z.string().min(1).max(100) }), ["ADMIN"], async (input, user) => {
  if (!(await revokeAgentKey(user, input.keyId))) return { ok: false, code: "not-found", message: "No such active key in your tenant." };
  revalidatePath("/admin/policy");
  return { ok: true, data: undefined };
});
