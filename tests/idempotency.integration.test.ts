import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { conversationFor, newCallKey, propose } from "./support/api";
import { expectNoEffect } from "./support/effects";
import { createWorld, type World } from "./support/world";

let world: World;
beforeAll(async () => {
  world = await createWorld();
});

const refund = (order: string, amount: number) => ({
  name: "issue_refund",
  arguments: { order_id: order, amount_cents: amount, currency: "USD", reason: "late" },
});

describe("call keys", () => {
  it("same key, same arguments: the stored outcome, marked replayed, and the effect once", async () => {
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const key = newCallKey();
    const first = await propose(world.keys.agent, conversation, refund(world.orders.o1004, 1500), key);
    expect(first.json).toMatchObject({ kind: "executed", code: "refund.issued" });
    expect(first.json.replayed).toBeUndefined();

    // Same canonical arguments in another key order and spacing.
    const reordered = `{ "arguments": {"reason":"late", "currency":"USD","amount_cents":1500,"order_id":"${world.orders.o1004}"}, "name":"issue_refund" }`;
    const second = await expectNoEffect(world, () => propose(world.keys.agent, conversation, reordered, key));
    expect(second.json).toEqual({ ...first.json, replayed: true });
    // Byte for byte: the stored copy's key order (jsonb) does not show.
    expect(second.text).toBe(`${first.text.slice(0, -1)},"replayed":true}`);

    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(1);
    const order = await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } });
    expect(order.refundedCents).toBe(1500);
    const budgets = await db.conversation.findUniqueOrThrow({ where: { id: conversation } });
    expect(budgets).toMatchObject({ writesMade: 1, irreversibleCents: 1500 });
    const log = await db.decisionLog.findMany({ where: { toolCallId: first.json.id }, orderBy: { id: "asc" } });
    expect(log.map((row) => [row.code, row.replayed])).toEqual([
      ["refund.outcome-unknown", false],
      ["refund.issued", false],
      ["refund.issued", true],
    ]);
  });

  it("same key, other arguments: call-key.reused and no effect", async () => {
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const key = newCallKey();
    await propose(world.keys.agent, conversation, refund(world.orders.o1001, 100), key);
    const reused = await expectNoEffect(world, () => propose(world.keys.agent, conversation, refund(world.orders.o1001, 101), key));
    expect(reused.json).toMatchObject({ kind: "rejected", stage: "idempotency", code: "call-key.reused" });
  });

  it("a write without a key: call-key.missing; a read needs none", async () => {
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const missing = await expectNoEffect(world, () => propose(world.keys.agent, conversation, refund(world.orders.o1001, 100)));
    expect(missing.json).toMatchObject({ kind: "rejected", stage: "idempotency", code: "call-key.missing" });
    const read = await propose(world.keys.agent, conversation, { name: "get_order", arguments: { order_id: world.orders.o1001 } });
    expect(read.json.code).toBe("order.read");
  });

  it("a read binds no key: reads sent with one key each answer afresh from the order as it is now", async () => {
    const own = await createWorld();
    const conversation = await conversationFor(own.keys.agent, { customer_id: own.customers.ana });
    const key = newCallKey();
    const read = { name: "get_order", arguments: { order_id: own.orders.o1001 } };
    const first = await propose(own.keys.agent, conversation, read, key);
    await db.order.update({ where: { id: own.orders.o1001 }, data: { refundedCents: 700 } });
    const second = await propose(own.keys.agent, conversation, read, key);
    expect([first.json.code, second.json.code]).toEqual(["order.read", "order.read"]);
    expect(second.json.id).not.toBe(first.json.id);
    expect(second.json.replayed).toBeUndefined();
    expect([first.json.result, second.json.result]).toMatchObject([{ refunded_cents: 0 }, { refunded_cents: 700 }]);
    const calls = await db.toolCall.findMany({ where: { id: { in: [first.json.id, second.json.id] } } });
    expect(calls.map((call) => call.callKey)).toEqual([null, null]);
  });

  it("keys are scoped to (conversation, tool): the same key elsewhere is a new call", async () => {
    const first = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const second = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const key = newCallKey();
    const a = await propose(world.keys.agent, first, refund(world.orders.o1001, 200), key);
    const b = await propose(world.keys.agent, second, refund(world.orders.o1001, 200), key);
    const c = await propose(world.keys.agent, first, { name: "send_status_email", arguments: { order_id: world.orders.o1001 } }, key);
    expect([a.json.code, b.json.code, c.json.code]).toEqual(["refund.issued", "refund.issued", "email.queued"]);
    expect(new Set([a.json.id, b.json.id, c.json.id]).size).toBe(3);
  });

  it("a transient outcome does not bind the key, so a retry can still succeed", async () => {
    const held = await createWorld();
    const conversation = await conversationFor(held.keys.agent, { customer_id: held.customers.ana });
    await db.order.update({ where: { id: held.orders.o1001 }, data: { refundPending: true } });
    const key = newCallKey();
    const blocked = await propose(held.keys.agent, conversation, refund(held.orders.o1001, 100), key);
    expect(blocked.json.code).toBe("refund.in-progress");
    await db.order.update({ where: { id: held.orders.o1001 }, data: { refundPending: false } });
    const retried = await propose(held.keys.agent, conversation, refund(held.orders.o1001, 100), key);
    expect(retried.json).toMatchObject({ code: "refund.issued" });
    expect(retried.json.replayed).toBeUndefined();
  });

  it("a call key is 1 to 200 printable ASCII characters; anything else counts as missing", async () => {
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    for (const key of ["", " ", "has space", "é-key", "k".repeat(201)]) {
      const response = await expectNoEffect(world, () => propose(world.keys.agent, conversation, refund(world.orders.o1001, 100), key));
      expect(response.json.code, JSON.stringify(key)).toBe("call-key.missing");
    }
    expect((await propose(world.keys.agent, conversation, refund(world.orders.o1001, 100), "k".repeat(200))).json.code).toBe("refund.issued");
    expect((await propose(world.keys.agent, conversation, refund(world.orders.o1001, 100), "~!@#$%^&*()")).json.code).toBe("refund.issued");
  });
});
