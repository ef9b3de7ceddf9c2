import { describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { completeReservedRefund, FRESH_FOR_MS, refundProviderKey } from "@/lib/payments/refunds";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { ownExternals } from "../support/externals";
import { expectRefundInvariants } from "../support/invariants";
import { createWorld } from "../support/world";

// The refund the gateway just committed settles in one statement that moves only a refund still reserved
// (docs/decisions/023): a second completion of the same decision, as a retry or a reconciler that got there first
// would make, settles nothing again and answers the outcome already recorded.
const externals = ownExternals();

/** The decision a 15.00 USD "damaged" refund of `order` at `version` was made under, as the gateway derives it. */
const decisionOf = (tenantId: string, orderId: string, orderVersion: number) => ({
  tenantId,
  orderId,
  orderVersion,
  amountCents: 1500,
  currency: "USD",
  reason: "damaged",
});

describe("the one-statement settle", () => {
  it("completing a settled refund again changes nothing: one refund, one settle in the log, the order as it was", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1001;
    const before = await db.order.findUniqueOrThrow({ where: { id: order } });
    const first = await proposeAsAgent(world, conversation, refund(order, 1500));
    expect(first.json).toMatchObject({ code: "refund.issued", result: { refunded_cents: 1500 } });
    const stored = await db.refund.findFirstOrThrow({ where: { toolCallId: first.json.id } });
    const decision = decisionOf(world.tenantId, order, before.version);
    expect(refundProviderKey(decision)).toBe(stored.providerKey);
    const settled = await db.order.findUniqueOrThrow({ where: { id: order } });
    expect(settled).toMatchObject({ refundedCents: 1500, refundPending: false });

    const again = await completeReservedRefund({ callId: first.json.id, decision, committedAt: performance.now() });
    expect(again).toMatchObject({ code: "refund.issued", result: { refund_id: stored.id, refunded_cents: 1500 } });
    expect(await db.order.findUniqueOrThrow({ where: { id: order } })).toMatchObject({
      version: settled.version,
      refundedCents: 1500,
      refundPending: false,
    });
    expect(await db.refund.findUniqueOrThrow({ where: { id: stored.id } })).toMatchObject({
      status: "issued",
      attempts: stored.attempts,
    });
    expect(await db.decisionLog.count({ where: { toolCallId: first.json.id, code: "refund.issued" } })).toBe(1);
    const stats = await externals.stats();
    expect(stats.totalsByOrder[order]).toBe(1500);
    await expectRefundInvariants([order], stats.totalsByOrder);
  });

  it("a process that stalled past the fresh window reads the refund first: one released meanwhile is never sent", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1001;
    const before = await db.order.findUniqueOrThrow({ where: { id: order } });
    const first = await proposeAsAgent(world, conversation, refund(order, 1500));
    const stored = await db.refund.findFirstOrThrow({ where: { toolCallId: first.json.id } });
    const decision = decisionOf(world.tenantId, order, before.version);
    // As reconciliation leaves a refund it released (the provider never saw it, and the re-check failed).
    await db.refund.update({ where: { id: stored.id }, data: { status: "released" } });
    const requests = (await externals.stats()).requestsByKey[stored.providerKey] ?? 0;
    const stalled = performance.now() - FRESH_FOR_MS - 1;
    await completeReservedRefund({ callId: first.json.id, decision, committedAt: stalled });
    expect((await externals.stats()).requestsByKey[stored.providerKey] ?? 0).toBe(requests);
    expect(await db.refund.findUniqueOrThrow({ where: { id: stored.id } })).toMatchObject({ status: "released" });
  });
});
