"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { createAgentKey, PolicySchema, revokeAgentKey, setWebhook, updatePolicy, WebhookSchema } from "@/lib/admin";
import { authedAction } from "@/lib/auth/guards";

export const updatePolicyAction = authedAction(PolicySchema, ["ADMIN"], async (input, user) => {
  const policy = await updatePolicy(user, input);
  revalidatePath("/admin/policy");
  return { ok: true, data: policy };
});

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

export const setWebhookAction = authedAction(WebhookSchema.nullable(), ["ADMIN"], async (input, user) => {
  await setWebhook(user, input);
  revalidatePath("/admin/policy");
  return { ok: true, data: undefined };
});
