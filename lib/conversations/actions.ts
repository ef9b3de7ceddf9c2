"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authedAction } from "@/lib/auth/guards";
import { searchCustomers } from "@/lib/conversations/console";
import { openConversation, OpenConversationSchema } from "@/lib/conversations/open";
import { workOnCustomer } from "@/lib/conversations/working-on";
import { countConversationOpen } from "@/lib/gateway";
import { countConversationOpenLimited } from "@/lib/observe/metrics";
import { IdSchema } from "@/lib/security/input";

export const openConversationAction = authedAction(OpenConversationSchema, ["AGENT"], async (input, user) => {
  // The same limit an API key has: opening is what resets the per-conversation budgets.
  const rate = await countConversationOpen({ userId: user.id, tenantId: user.tenantId });
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

export const workOnCustomerAction = authedAction(
  z.strictObject({ grant_id: IdSchema, customer_id: IdSchema }),
  ["AGENT"],
  async (input, user) => {
    const switched = await workOnCustomer(
      { userId: user.id, tenantId: user.tenantId },
      input.grant_id,
      input.customer_id,
    );
    if (!switched.ok) return switched;
    revalidatePath("/connections");
    return { ok: true, data: { conversationId: switched.conversationId } };
  },
);
