import { describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { conversationOver, proposeOver } from "../support/api-over-http";
import { callAction, personCookie } from "../support/app-instances";
import { refund } from "../support/calls";
import { ownProvider } from "../support/externals";
import { expectRefundInvariants } from "../support/invariants";
import { inTurn, ownInstances } from "../support/own-instances";
import { createWorld } from "../support/world";

// Two app instances of the production build against one PostgreSQL: every exactly-once guarantee must hold
// across processes, not only inside one.

const provider = ownProvider();
const instances = ownInstances(2, () => provider.env());

const stats = async () =>
  (await (await fetch(`${provider.url}/_stats`)).json()) as { totalsByOrder: Record<string, number>; refunds: number };

describe("two app instances, one PostgreSQL", () => {
  it("100 concurrent identical proposals with one call key, spread over both instances, refund once", async () => {
    const world = await createWorld({ rateConversationPerMin: 10_000 });
    const conversation = await conversationOver(inTurn(instances, 0), world.keys.agent, world.customers.ana);
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        proposeOver(
          inTurn(instances, index),
          world.keys.agent,
          conversation,
          refund(world.orders.o1004, 2500),
          "one-key",
        ),
      ),
    );
    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect(new Set(responses.map((response) => response.json.id)).size).toBe(1);
    expect(responses.filter((response) => !response.json.replayed)).toHaveLength(1);
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(1);
    await expectRefundInvariants([world.orders.o1004], (await stats()).totalsByOrder);
  });

  it("50 concurrent different refunds on one order whose sum exceeds its total never refund more than the total", async () => {
    const world = await createWorld({ rateKeyPerMin: 10_000 });
    const conversations = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        conversationOver(inTurn(instances, index), world.keys.agent, world.customers.ana),
      ),
    );
    const responses = await Promise.all(
      conversations.map((conversation, index) =>
        proposeOver(
          inTurn(instances, index),
          world.keys.agent,
          conversation,
          refund(world.orders.o1004, 1000),
          `k-${index}`,
        ),
      ),
    );
    expect(responses.every((response) => response.status === 200)).toBe(true);
    const issued = responses.filter((response) => response.json.code === "refund.issued").length;
    expect(issued).toBeGreaterThan(0);
    const order = await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } });
    expect(order.refundedCents).toBe(issued * 1000);
    expect(order.refundedCents).toBeLessThanOrEqual(order.totalCents);
    await expectRefundInvariants([world.orders.o1004], (await stats()).totalsByOrder);
  });

  it("20 concurrent approvals of one request, through the real server action on both instances, execute once", async () => {
    const world = await createWorld();
    const conversation = await conversationOver(inTurn(instances, 0), world.keys.agent, world.customers.ana);
    const pending = await proposeOver(
      inTurn(instances, 1),
      world.keys.agent,
      conversation,
      refund(world.orders.o1004, 8000),
      "held",
    );
    expect(pending.json.code).toBe("approval.required");
    const cookie = await personCookie(world.users.supervisor);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        callAction(
          inTurn(instances, index),
          "/approvals",
          "decideApprovalsAction",
          [{ ids: [pending.json.approval!.id], decision: "approve" }],
          cookie,
        ),
      ),
    );
    expect(answers.filter((text) => text.includes('"status":"approved"'))).toHaveLength(1);
    expect(answers.filter((text) => text.includes("approval.already-decided"))).toHaveLength(19);
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(1);
    expect((await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).refundedCents).toBe(8000);
    await expectRefundInvariants([world.orders.o1004], (await stats()).totalsByOrder);
  });
});
