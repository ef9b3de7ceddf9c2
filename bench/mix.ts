import { db } from "../lib/db";
import { newId } from "../lib/ids";
import { createWorld, NO_CEILINGS, NO_DUPLICATE_GUARD, type World } from "../tests/support/world";

// The agent workload of the load benchmarks: 70% get_order, 20% rejected proposals (a string amount fails the
// schema), 10% refunds within policy, spread over many conversations whose orders never run out of refundable
// money, under a policy whose limits the load never reaches.

export interface Mix {
  world: World;
  conversations: { id: string; order: string }[];
}

export interface MixCall {
  conversationId: string;
  body: string;
  /** Only the refunds that execute carry one, as writes must. */
  callKey: string | null;
  expected: "order.read" | "schema.invalid" | "refund.issued";
}

export async function createMix(conversationCount: number, firstOrderNumber: number): Promise<Mix> {
  const world = await createWorld({
    autoLimitCents: 100_000,
    sessionCapCents: 2_000_000_000,
    maxAutoWrites: 100_000_000,
    rateConversationPerMin: 1_000_000,
    rateKeyPerMin: 1_000_000,
    ...NO_CEILINGS,
    // The duplicate-intent guard still runs its statement, looking back zero hours: every round refunds an order again.
    ...NO_DUPLICATE_GUARD,
  });
  const conversations: Mix["conversations"] = [];
  for (let i = 0; i < conversationCount; i++) {
    const order = `ord_${firstOrderNumber + i}`;
    await db.order.create({
      data: {
        id: order,
        tenantId: world.tenantId,
        customerId: world.customers.ana,
        totalCents: 2_000_000_000,
        status: "delivered",
        currency: "USD",
        addressLine1: "1 Elm St",
        postalCode: "94107",
      },
    });
    const conversation = await db.conversation.create({
      data: {
        id: newId("conv"),
        tenantId: world.tenantId,
        agentId: world.users.agent,
        customerId: world.customers.ana,
        tools: ["get_order", "issue_refund"],
        scopes: ["orders:read", "refunds:write"],
      },
      select: { id: true },
    });
    conversations.push({ id: conversation.id, order });
  }
  return { world, conversations };
}

/** The `i`th call of the mix; `keyPrefix` keeps call keys apart between runs on one database. */
export function mixCall({ world, conversations }: Mix, i: number, keyPrefix: string): MixCall {
  const slot = i % 10;
  const conversation = conversations[(i * 7919) % conversations.length];
  const refund = (amount: number | string) => ({
    name: "issue_refund",
    arguments: { order_id: conversation.order, amount_cents: amount, currency: "USD", reason: "late" },
  });
  if (slot < 7)
    return {
      conversationId: conversation.id,
      body: JSON.stringify({ name: "get_order", arguments: { order_id: world.orders.o1001 } }),
      callKey: null,
      expected: "order.read",
    };
  if (slot < 9)
    return {
      conversationId: conversation.id,
      body: JSON.stringify(refund("100")),
      callKey: null,
      expected: "schema.invalid",
    };
  return {
    conversationId: conversation.id,
    body: JSON.stringify(refund(100)),
    callKey: `${keyPrefix}-${i}`,
    expected: "refund.issued",
  };
}
