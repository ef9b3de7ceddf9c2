"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { createAgentKey, endSessions, PolicySchema, revokeAgentKey, setWebhook, updatePolicy, WebhookSchema } from "@/lib/admin";
import { authedAction } from "@/lib/auth/guards";
import { IdSchema } from "@/lib/security/input";

export const updatePolicyAction = authedAction(PolicySchema, ["ADMIN"], async (input, user) => {
  const policy = await updatePolicy(user, input);
  revalidatePath("/admin/policy");
  return { ok: true, data: policy };
});

export const createKeyAction = authedAction(z.strictObject({ userId: IdSchema }), ["ADMIN"], async (input, user) => {
  const created = await createAgentKey(user, input.userId);
  if (!created.ok) return { ok: false, code: "not-found", message: "No such agent in your tenant." };
  revalidatePath("/admin/policy");
  return { ok: true, data: { id: created.id, key: created.key } };
});

export const revokeKeyAction = authedAction(z.strictObject({ keyId: IdSchema }), ["ADMIN"], async (input, user) => {
  if (!(await revokeAgentKey(user, input.keyId))) return { ok: false, code: "not-found", message: "No such active key in your tenant." };
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

export const setWebhookAction = authedAction(WebhookSchema.nullable(), ["ADMIN"], async (input, user) => {
  await setWebhook(user, input);
  revalidatePath("/admin/policy");
  return { ok: true, data: undefined };
});
