import { describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { loadContext } from "@/lib/gateway/context";
import { executeCall } from "@/lib/gateway/execute";
import { findAgentConversation } from "@/lib/conversations";
import { issueRefund } from "@/lib/tools/issue-refund";
import { conversationFor, newCallKey, propose } from "./support/api";
import { createWorld } from "./support/world";

const refund = (order: string, amount: number) => ({
  name: "issue_refund",
  arguments: { order_id: order, amount_cents: amount, currency: "USD", reason: "damaged" },
});

describe("concurrency on one PostgreSQL", () => {
  it("100 concurrent identical proposals with one call key execute exactly once", async () => {
    const world = await createWorld({ rateConversationPerMin: 1000 });
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const key = newCallKey();
    const responses = await Promise.all(
      Array.from({ length: 100 }, () => propose(world.keys.agent, conversation, refund(world.orders.o1004, 2500), key)),
    );
    const executed = responses.filter((response) => !response.json.replayed);
    expect(executed).toHaveLength(1);
    expect(executed[0].json.code).toBe("refund.issued");
    // A replay that arrives while the provider is still answering honestly says the outcome is not known yet.
    expect(responses.every((response) => response.json.id === executed[0].json.id)).toBe(true);
    expect(
      responses.every((response) => ["refund.issued", "refund.outcome-unknown"].includes(response.json.code)),
    ).toBe(true);
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(1);
    expect((await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).refundedCents).toBe(2500);
  });

  it("50 concurrent refunds on one order whose sum exceeds its total never refund more than the total", async () => {
    const world = await createWorld({ rateKeyPerMin: 10_000 });
    const conversations = await Promise.all(
      Array.from({ length: 50 }, () => conversationFor(world.keys.agent, { customer_id: world.customers.ana })),
    );
    const responses = await Promise.all(
      conversations.map((conversation) =>
        propose(world.keys.agent, conversation, refund(world.orders.o1004, 1000), newCallKey()),
      ),
    );
    const codes = responses.map((response) => response.json.code);
    expect(
      codes.every((code) =>
        ["refund.issued", "order.changed", "amount.exceeds-refundable", "refund.in-progress"].includes(code),
      ),
    ).toBe(true);
    const issued = codes.filter((code) => code === "refund.issued").length;
    expect(issued).toBeGreaterThan(0);
    const order = await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } });
    const refunds = await db.refund.aggregate({
      where: { orderId: world.orders.o1004 },
      _sum: { amountCents: true },
      _count: true,
    });
    expect(order.refundedCents).toBe(issued * 1000);
    expect(refunds._sum.amountCents ?? 0).toBe(order.refundedCents);
    expect(refunds._count).toBe(issued);
    expect(order.refundedCents).toBeLessThanOrEqual(order.totalCents);
  });

  it("a write conditional on a version the order has moved past gives order.changed and changes nothing", async () => {
    const world = await createWorld();
    const id = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const { conversation } = (await findAgentConversation(
      { userId: world.users.agent, tenantId: world.tenantId },
      id,
    ))!;
    const args = refund(world.orders.o1004, 1000).arguments;
    const context = await loadContext(db, issueRefund as never, args, conversation);
    if (!context.ok) throw new Error("order should load");
    await db.order.update({ where: { id: world.orders.o1004 }, data: { version: { increment: 1 } } });
    const result = await db.$transaction((tx) =>
      executeCall(tx, {
        tool: issueRefund as never,
        args,
        order: context.value,
        conversation,
        impactCents: 1000,
        callId: "call_stale",
      }),
    );
    expect(result).toMatchObject({ kind: "unavailable", stage: "execute", code: "order.changed" });
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);
    expect((await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).refundedCents).toBe(0);
    expect((await db.conversation.findUniqueOrThrow({ where: { id } })).writesMade).toBe(0);
  });

  it("the database refuses a refunded total above the order total even if the application did not", async () => {
    const world = await createWorld();
    await expect(
      db.order.update({ where: { id: world.orders.o1001 }, data: { refundedCents: 4201 } }),
    ).rejects.toThrow();
  });
});
