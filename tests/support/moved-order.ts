import { canonicalJson, sha256Hex } from "@/lib/canonical";
import { findAgentConversation } from "@/lib/conversations/lookup";
import { db, transaction } from "@/lib/db";
import { newCallRecord } from "@/lib/gateway";
import { loadCallFacts } from "@/lib/gateway/context/facts";
import { executeCall } from "@/lib/gateway/outcome/execute";
import { paymentPort } from "@/lib/payments/port";
import { issueRefund } from "@/lib/tools/issue-refund";
import { agentConversation, refund } from "./calls";
import type { World } from "./world";

/**
 * A refund's effect run on the order as a new conversation of the agent read it, after the order moved on (its
 * version bumped): the write conditional on the version read. With `reserve`, the effect reserves its exposure in
 * its own statement, as an automatic refund's does, and records the call as `call_stale`.
 */
export async function refundOnMovedOrder(world: World, order: string, cents: number, { reserve = false } = {}) {
  const id = await agentConversation(world);
  const { conversation } = (await findAgentConversation({ userId: world.users.agent, tenantId: world.tenantId }, id))!;
  const args = refund(order, cents).arguments;
  const context = await loadCallFacts(db, issueRefund as never, args, conversation, null);
  if (!context.ok) throw new Error("the order should load");
  await db.order.update({ where: { id: order }, data: { version: { increment: 1 } } });
  const call = {
    tool: issueRefund as never,
    args,
    order: context.value.order,
    conversation,
    impactCents: cents,
    callId: "call_stale",
  };
  if (!reserve) {
    return { conversationId: id, result: await transaction((tx) => executeCall(tx, call, { payments: paymentPort })) };
  }
  const argsCanonical = canonicalJson(args);
  const record = newCallRecord({
    id: "call_stale",
    conversation,
    toolName: "issue_refund",
    argsCanonical,
    argsHash: sha256Hex(argsCanonical),
  });
  const result = await transaction((tx) =>
    executeCall(tx, { ...call, exposure: { reserveCents: cents } }, { payments: paymentPort }, (outcome) => ({
      ...record,
      outcome,
    })),
  );
  return { conversationId: id, result };
}
