"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authedAction } from "@/lib/auth/guards";
import { findAgentConversation } from "@/lib/conversations/lookup";
import { IdSchema } from "@/lib/security/input";
import { callBody } from "./http";
import { proposeCall } from "./propose";

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
