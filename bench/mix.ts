import {
  anaConversation,
  createWorld,
  moreOrders,
  NO_CEILINGS,
  NO_DUPLICATE_GUARD,
  type World,
} from "../tests/support/world";

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
  const orders = await moreOrders(world, conversationCount, 2_000_000_000, firstOrderNumber);
  const conversations: Mix["conversations"] = [];
  for (const order of orders)
    conversations.push({
      id: await anaConversation(world, ["get_order", "issue_refund"], ["orders:read", "refunds:write"]),
      order,
    });
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
