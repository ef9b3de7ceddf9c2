import { expect } from "vitest";
import type { Approver } from "@/lib/approvals/decision/types";
import { conversationFor, newCallKey, propose } from "./api";
import type { World } from "./world";

// The calls most tests make, written once: the refund an agent proposes, the supervisor who decides it, the
// conversation it is proposed in, and a refund held for approval.

/** The arguments of an issue_refund; `extra` adds or overrides fields (a malformed amount, a host-owned name). */
export const refundArguments = (order: string, amount: unknown, extra: Record<string, unknown> = {}) => ({
  order_id: order,
  amount_cents: amount,
  currency: "USD",
  reason: "damaged",
  ...extra,
});

/** An issue_refund call as an agent sends it. */
export const refund = (order: string, amount: unknown, extra: Record<string, unknown> = {}) => ({
  name: "issue_refund",
  arguments: refundArguments(order, amount, extra),
});

/** A get_call_status call: what the agent reads of an earlier call. */
export const callStatus = (callId: string) => ({ name: "get_call_status", arguments: { call_id: callId } });

/** The tenant's supervisor, as the approval functions take a decider. */
export const supervisorOf = (world: World): Approver => ({
  userId: world.users.supervisor,
  tenantId: world.tenantId,
  role: "SUPERVISOR",
});

/** A conversation the tenant's refund-permitted agent opens about a customer (ana unless named); `extra` joins the body. */
export const agentConversation = (
  world: World,
  customer: keyof World["customers"] = "ana",
  extra: Record<string, unknown> = {},
) => conversationFor(world.keys.agent, { customer_id: world.customers[customer], ...extra });

/** `call` proposed by the tenant's refund-permitted agent under a new call key. */
export const proposeAsAgent = (world: World, conversation: string, call: unknown) =>
  propose(world.keys.agent, conversation, call, newCallKey());

/** The customer an order of the world belongs to. */
const customerOf = (world: World, order: string): keyof World["customers"] =>
  order === world.orders.o1002 ? "ben" : order === world.orders.o2001 ? "gil" : "ana";

/**
 * An issue_refund above the auto limit, proposed by the agent and held for a supervisor (asserted): by default
 * 80.00 on o1004, in a new conversation about the order's customer.
 */
export async function holdRefund(
  world: World,
  {
    amount = 8000,
    order = world.orders.o1004,
    conversation,
  }: { amount?: number; order?: string; conversation?: string } = {},
) {
  const id = conversation ?? (await agentConversation(world, customerOf(world, order)));
  const response = await proposeAsAgent(world, id, refund(order, amount));
  expect(response.json.code).toBe("approval.required");
  return {
    conversation: id,
    callId: response.json.id,
    approvalId: response.json.approval!.id,
    expiresAt: response.json.approval!.expires_at,
  };
}
