"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { callBody } from "@/lib/agent-api/http";
import { authedAction } from "@/lib/auth/guards";
import { findAgentConversation, openConversation, OpenConversationSchema, searchCustomers } from "@/lib/conversations";
import { proposeCall } from "@/lib/agent-api/propose";
import { db } from "@/lib/db";
import { countConversationOpen } from "@/lib/gateway/rate";
import { countConversationOpenLimited } from "@/lib/metrics";
import { IdSchema } from "@/lib/security/input";

const ProposeSchema = z.strictObject({
  conversationId: IdSchema,
  envelope: z.string().max(64 * 1024),
  callKey: z.string().max(300).optional(),
});

/** The browser console: the same gateway function the HTTP route calls, with the signed-in agent's identity. */
export const proposeAction = authedAction(ProposeSchema, ["AGENT"], async (input, user) => {
  const agent = { userId: user.id, tenantId: user.tenantId };
  const found = await findAgentConversation(agent, input.conversationId);
  if (!found) return { ok: false, code: "not-found", message: "No such conversation." };
  const bytes = new TextEncoder().encode(input.envelope);
  const call = await proposeCall({
    ...found,
    apiKeyId: null,
    callKey: input.callKey?.trim() ? input.callKey.trim() : null,
    raw: { bytes, truncated: false },
  });
  revalidatePath(`/conversations/${input.conversationId}`);
  return { ok: true, data: callBody(call.id, call.outcome, call.replayed) };
});

export const openConversationAction = authedAction(OpenConversationSchema, ["AGENT"], async (input, user) => {
  // The same limit an API key has: opening is what resets the per-conversation budgets.
  const rate = await countConversationOpen(db, { userId: user.id, tenantId: user.tenantId });
  if (!rate.ok) {
    countConversationOpenLimited();
    return {
      ok: false,
      code: "rate.limited",
      message: `You opened too many conversations this minute; try again in ${rate.retryAfterSeconds} s.`,
    };
  }
  const opened = await openConversation({ userId: user.id, tenantId: user.tenantId }, input);
  if (!opened.ok) return { ok: false, code: opened.code, message: opened.message };
  revalidatePath("/conversations");
  return { ok: true, data: opened.conversation };
});

export const searchCustomersAction = authedAction(
  z.strictObject({ query: z.string().max(100) }),
  ["AGENT"],
  async (input, user) => {
    return { ok: true, data: await searchCustomers(user.tenantId, input.query) };
  },
);
