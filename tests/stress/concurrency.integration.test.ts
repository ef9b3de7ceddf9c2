import { describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { newCallKey, propose } from "../support/api";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { createWorld } from "../support/world";
import { refundOnMovedOrder } from "../support/moved-order";

describe("concurrency on one PostgreSQL", () => {
  it("100 concurrent identical proposals with one call key execute exactly once", async () => {
    const world = await createWorld({ rateConversationPerMin: 1000 });
    const conversation = await agentConversation(world);
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

  it("50 concurrent refunds of one amount on one order pay once: the rest lose the race, wait on it or are held as its duplicates", async () => {
    const world = await createWorld({ rateKeyPerMin: 10_000 });
    const conversations = await Promise.all(Array.from({ length: 50 }, () => agentConversation(world)));
    const responses = await Promise.all(
      conversations.map((conversation) => proposeAsAgent(world, conversation, refund(world.orders.o1004, 1000))),
    );
    const codes = responses.map((response) => response.json.code);
    // The proposals that read the order before the first refund committed lose the version race; those that read it
    // after wait on its settlement or, once it settled, are held for a person as possible duplicates of it.
    expect(
      codes.every((code) =>
        ["refund.issued", "order.changed", "refund.in-progress", "approval.required"].includes(code),
      ),
    ).toBe(true);
    const [paid] = responses.filter((response) => response.json.code === "refund.issued");
    expect(codes.filter((code) => code === "refund.issued")).toHaveLength(1);
    for (const held of responses.filter((response) => response.json.code === "approval.required"))
      expect(held.json.approval!.preview.held[0]).toMatchObject({
        rule: "possible_duplicate",
        of_call_id: paid.json.id,
      });
    const order = await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } });
    const refunds = await db.refund.aggregate({
      where: { orderId: world.orders.o1004 },
      _sum: { amountCents: true },
      _count: true,
    });
    expect(order.refundedCents).toBe(1000);
    expect(refunds._sum.amountCents).toBe(1000);
    expect(refunds._count).toBe(1);
  });

  it("a write conditional on a version the order has moved past gives order.changed and changes nothing", async () => {
    const world = await createWorld();
    const { conversationId: id, result } = await refundOnMovedOrder(world, world.orders.o1004, 1000);
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
