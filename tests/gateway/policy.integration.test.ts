import { describe, expect, it } from "vitest";
import { authenticateForConversation } from "@/lib/conversations/authenticate";
import { db } from "@/lib/db";
import { proposeCall } from "@/lib/agent-api/propose";
import { newCallKey, propose } from "../support/api";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { expectNoEffect } from "../support/effects";
import { NO_DUPLICATE_GUARD, createWorld } from "../support/world";

describe("consequence policy (tenant defaults: auto 5000, session cap 10000, 3 auto writes)", () => {
  it("an 8000-cent refund on ord_1004 waits for approval, with a runtime-built preview and no effect", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const pending = await expectNoEffect(world, () =>
      proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000)),
    );
    expect(pending.json).toMatchObject({
      kind: "pending_approval",
      stage: "approval",
      code: "approval.required",
      model: { status: "needs_approval" },
    });
    const approval = pending.json.approval!;
    expect(new Date(approval.expires_at).getTime() - Date.now()).toBeGreaterThan(890_000);
    expect(approval.preview).toEqual({
      tool: "issue_refund",
      arguments: { order_id: world.orders.o1004, amount_cents: 8000, currency: "USD", reason: "damaged" },
      impact: { amount_cents: 8000, currency: "USD" },
      order: {
        order_id: world.orders.o1004,
        status: "delivered",
        total_cents: 15000,
        refunded_cents: 0,
        refundable_cents: 15000,
        currency: "USD",
        version: 1,
      },
      conversation_id: conversation,
      customer_id: world.customers.ana,
      held: [{ rule: "auto_limit_cents", limit_cents: 5000, amount_cents: 8000 }],
    });
    const stored = await db.approvalRequest.findUniqueOrThrow({ where: { id: approval.id } });
    expect(stored).toMatchObject({
      status: "pending",
      impactCents: 8000,
      originCallId: pending.json.id,
      requestedById: world.users.agent,
    });
  });

  it("proposing the same call again returns the same pending request, not a second one", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const first = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
    const second = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
    expect(second.json.approval?.id).toBe(first.json.approval?.id);
    expect(await db.approvalRequest.count({ where: { conversationId: conversation } })).toBe(1);
  });

  it("three 4000-cent refunds on ord_1004: two execute, the third crosses the session cap and waits", async () => {
    const world = await createWorld(NO_DUPLICATE_GUARD);
    const conversation = await agentConversation(world);
    const codes = [];
    for (let i = 0; i < 3; i++)
      codes.push((await proposeAsAgent(world, conversation, refund(world.orders.o1004, 4000))).json.code);
    expect(codes).toEqual(["refund.issued", "refund.issued", "approval.required"]);
    const order = await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } });
    expect(order.refundedCents).toBe(8000);
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(2);
    expect(await db.conversation.findUniqueOrThrow({ where: { id: conversation } })).toMatchObject({
      writesMade: 2,
      irreversibleCents: 8000,
    });
  });

  it("the session cap is per conversation: a new conversation starts a new budget", async () => {
    const world = await createWorld(NO_DUPLICATE_GUARD);
    const first = await agentConversation(world);
    const second = await agentConversation(world);
    await proposeAsAgent(world, first, refund(world.orders.o1004, 5000));
    await proposeAsAgent(world, first, refund(world.orders.o1004, 5000));
    expect((await proposeAsAgent(world, first, refund(world.orders.o1004, 1))).json.code).toBe("approval.required");
    expect((await proposeAsAgent(world, second, refund(world.orders.o1004, 1))).json.code).toBe("refund.issued");
  });

  it("a fourth reversible write in a conversation waits for approval", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const address = (n: number) => ({
      name: "update_shipping_address",
      arguments: { order_id: world.orders.o1003, line1: `${n} Elm St`, postal_code: "94107" },
    });
    const codes = [];
    for (let n = 1; n <= 3; n++) codes.push((await proposeAsAgent(world, conversation, address(n))).json.code);
    const fourth = await expectNoEffect(world, () => proposeAsAgent(world, conversation, address(4)));
    expect([...codes, fourth.json.code]).toEqual([
      "address.updated",
      "address.updated",
      "address.updated",
      "approval.required",
    ]);
    expect((await db.order.findUniqueOrThrow({ where: { id: world.orders.o1003 } })).addressLine1).toBe("3 Elm St");
  });

  it("writes of any kind count toward max_auto_writes", async () => {
    const world = await createWorld(NO_DUPLICATE_GUARD);
    const conversation = await agentConversation(world);
    await proposeAsAgent(world, conversation, refund(world.orders.o1001, 100));
    await proposeAsAgent(world, conversation, {
      name: "send_status_email",
      arguments: { order_id: world.orders.o1001 },
    });
    await proposeAsAgent(world, conversation, refund(world.orders.o1001, 100));
    const address = {
      name: "update_shipping_address",
      arguments: { order_id: world.orders.o1003, line1: "9 Elm St", postal_code: "94107" },
    };
    expect((await proposeAsAgent(world, conversation, address)).json.code).toBe("approval.required");
  });

  it("the tenant's own policy row decides, not the defaults", async () => {
    const world = await createWorld({ autoLimitCents: 10000, sessionCapCents: 20000 });
    const conversation = await agentConversation(world);
    expect((await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000))).json.code).toBe(
      "refund.issued",
    );
    await db.tenant.update({ where: { id: world.tenantId }, data: { autoLimitCents: 1000 } });
    expect((await proposeAsAgent(world, conversation, refund(world.orders.o1004, 2000))).json.code).toBe(
      "approval.required",
    );
  });

  it("reads are never held, however many writes came before", async () => {
    const world = await createWorld({ maxAutoWrites: 0 });
    const conversation = await agentConversation(world);
    expect(
      (
        await propose(world.keys.agent, conversation, {
          name: "get_order",
          arguments: { order_id: world.orders.o1001 },
        })
      ).json.code,
    ).toBe("order.read");
  });
});

describe("a write decides on its conversation as the lock reads it, not as its request found it", () => {
  // Two calls of one conversation can both be looked up before either takes the lock; the second must see
  // what the first committed. Here the change lands between the lookup and the gateway function the route calls.
  async function lookedUp() {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const authenticated = await authenticateForConversation(`Bearer ${world.keys.agent}`, conversation);
    const found = authenticated!.found!;
    const proposeAsFound = (body: unknown) =>
      proposeCall({
        ...found,
        apiKeyId: authenticated!.agent.apiKeyId,
        callKey: newCallKey(),
        raw: { bytes: new TextEncoder().encode(JSON.stringify(body)), truncated: false },
      });
    return { world, conversation, found, proposeAsFound };
  }

  it("a budget spent after the lookup holds the refund for approval", async () => {
    const { world, conversation, found, proposeAsFound } = await lookedUp();
    expect(found.conversation.irreversibleCents).toBe(0);
    await db.conversation.update({ where: { id: conversation }, data: { irreversibleCents: 9500 } });
    const held = await expectNoEffect(world, () => proposeAsFound(refund(world.orders.o1004, 1000)));
    expect(held).toMatchObject({ outcome: { kind: "pending_approval", code: "approval.required" } });
  });

  it("a permission revoked after the lookup denies the refund", async () => {
    const { world, found, proposeAsFound } = await lookedUp();
    expect(found.conversation.agent?.canRefund).toBe(true);
    await db.user.update({ where: { id: world.users.agent }, data: { canRefund: false } });
    const denied = await expectNoEffect(world, () => proposeAsFound(refund(world.orders.o1004, 1000)));
    expect(denied).toMatchObject({ outcome: { kind: "denied", stage: "policy", code: "agent.not-authorized" } });
  });
});

describe("the fraud hold", () => {
  it("stops writes to the order, not reads of it", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const read = await propose(world.keys.agent, conversation, {
      name: "get_order",
      arguments: { order_id: world.orders.o1005 },
    });
    expect(read.json).toMatchObject({ kind: "executed", code: "order.read", result: { order_id: world.orders.o1005 } });
  });
});
