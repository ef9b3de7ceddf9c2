import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { newCallKey, propose, proposeAs } from "../support/api";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { expectNoEffect } from "../support/effects";
import { NO_DUPLICATE_GUARD, createWorld, type World } from "../support/world";

let world: World;
beforeAll(async () => {
  world = await createWorld(NO_DUPLICATE_GUARD);
});

describe("call keys", () => {
  it("same key, same arguments: the stored outcome, marked replayed, and the effect once", async () => {
    const conversation = await agentConversation(world);
    const key = newCallKey();
    const first = await propose(world.keys.agent, conversation, refund(world.orders.o1004, 1500), key);
    expect(first.json).toMatchObject({ kind: "executed", code: "refund.issued" });
    expect(first.json.replayed).toBeUndefined();

    // Same canonical arguments in another key order and spacing.
    const reordered = `{ "arguments": {"reason":"damaged", "currency":"USD","amount_cents":1500,"order_id":"${world.orders.o1004}"}, "name":"issue_refund" }`;
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
    const conversation = await agentConversation(world);
    const key = newCallKey();
    await propose(world.keys.agent, conversation, refund(world.orders.o1001, 100), key);
    const reused = await expectNoEffect(world, () =>
      propose(world.keys.agent, conversation, refund(world.orders.o1001, 101), key),
    );
    expect(reused.json).toMatchObject({ kind: "rejected", stage: "idempotency", code: "call-key.reused" });
  });

  it("a write without a key is keyed by its content: an identical retry replays, other arguments are a new call", async () => {
    const own = await createWorld(NO_DUPLICATE_GUARD);
    const conversation = await agentConversation(own);
    const first = await propose(own.keys.agent, conversation, refund(own.orders.o1001, 100));
    expect(first.json).toMatchObject({ kind: "executed", code: "refund.issued" });
    const retried = await expectNoEffect(own, () =>
      propose(own.keys.agent, conversation, refund(own.orders.o1001, 100)),
    );
    expect(retried.json).toEqual({ ...first.json, replayed: true });
    const other = await propose(own.keys.agent, conversation, refund(own.orders.o1001, 101));
    expect(other.json).toMatchObject({ code: "refund.issued" });
    expect(other.json.id).not.toBe(first.json.id);
    // A deliberate identical second write carries its own key.
    const deliberate = await proposeAsAgent(own, conversation, refund(own.orders.o1001, 100));
    expect(deliberate.json).toMatchObject({ code: "refund.issued" });
    expect(deliberate.json.replayed).toBeUndefined();
    expect(await db.refund.count({ where: { orderId: own.orders.o1001 } })).toBe(3);
    expect((await db.order.findUniqueOrThrow({ where: { id: own.orders.o1001 } })).refundedCents).toBe(301);
    // The content key is scoped to the conversation: the same call in another one is a new call.
    const elsewhere = await agentConversation(own);
    const fresh = await propose(own.keys.agent, elsewhere, refund(own.orders.o1001, 100));
    expect(fresh.json.replayed).toBeUndefined();
    expect(fresh.json.id).not.toBe(first.json.id);
    const read = await propose(own.keys.agent, conversation, {
      name: "get_order",
      arguments: { order_id: own.orders.o1001 },
    });
    expect(read.json.code).toBe("order.read");
  });

  it("a provider's own call id keys a write: a retried payload replays, two calls with equal arguments act twice", async () => {
    const own = await createWorld(NO_DUPLICATE_GUARD);
    const conversation = await agentConversation(own);
    const args = JSON.stringify({ order_id: own.orders.o1001, amount_cents: 100, currency: "USD", reason: "late" });
    const chat = (...ids: string[]) => ({
      tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "issue_refund", arguments: args } })),
    });
    const first = await proposeAs(own.keys.agent, conversation, "openai-chat", chat("call_a"));
    const retried = await expectNoEffect(own, () =>
      proposeAs(own.keys.agent, conversation, "openai-chat", chat("call_a")),
    );
    expect(retried.json.results[0]).toEqual({ ...first.json.results[0], replayed: true });
    const twice = await proposeAs(own.keys.agent, conversation, "openai-chat", chat("call_b", "call_c"));
    expect(twice.json.results.map((result) => [result.code, result.replayed])).toEqual([
      ["refund.issued", undefined],
      ["refund.issued", undefined],
    ]);
    const block = (id: string) => ({
      content: [{ type: "tool_use", id, name: "issue_refund", input: JSON.parse(args) }],
    });
    const anthropic = await proposeAs(own.keys.agent, conversation, "anthropic", block("toolu_1"));
    const anthropicRetry = await proposeAs(own.keys.agent, conversation, "anthropic", block("toolu_1"));
    expect(anthropicRetry.json.results[0]).toEqual({ ...anthropic.json.results[0], replayed: true });
    expect(await db.refund.count({ where: { orderId: own.orders.o1001 } })).toBe(4);
    expect((await db.order.findUniqueOrThrow({ where: { id: own.orders.o1001 } })).refundedCents).toBe(400);

    // Ids are keyed whole: two that share their first 100 characters are two calls, each answered under its own id.
    const long = (end: string) => `call_${"x".repeat(120)}${end}`;
    const other = await agentConversation(own);
    const longer = await proposeAs(own.keys.agent, other, "openai-chat", chat(long("1"), long("2")));
    expect(longer.json.results.map((result) => [result.ref, result.code, result.replayed])).toEqual([
      [long("1"), "refund.issued", undefined],
      [long("2"), "refund.issued", undefined],
    ]);
    expect(await db.refund.count({ where: { orderId: own.orders.o1001 } })).toBe(6);
  });

  it("call-key.reused tells the model what its runtime must change", async () => {
    const conversation = await agentConversation(world);
    const key = newCallKey();
    await propose(world.keys.agent, conversation, refund(world.orders.o1001, 100), key);
    const reused = await propose(world.keys.agent, conversation, refund(world.orders.o1001, 102), key);
    expect(reused.json.model).toEqual({ status: "invalid_request", message: expect.stringContaining("new call key") });
  });

  it("a read binds no key: reads sent with one key each answer afresh from the order as it is now", async () => {
    const own = await createWorld(NO_DUPLICATE_GUARD);
    const conversation = await agentConversation(own);
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
    const first = await agentConversation(world);
    const second = await agentConversation(world);
    const key = newCallKey();
    const a = await propose(world.keys.agent, first, refund(world.orders.o1001, 200), key);
    const b = await propose(world.keys.agent, second, refund(world.orders.o1001, 200), key);
    const c = await propose(
      world.keys.agent,
      first,
      { name: "send_status_email", arguments: { order_id: world.orders.o1001 } },
      key,
    );
    expect([a.json.code, b.json.code, c.json.code]).toEqual(["refund.issued", "refund.issued", "email.queued"]);
    expect(new Set([a.json.id, b.json.id, c.json.id]).size).toBe(3);
  });

  it("a transient outcome does not bind the key, so a retry can still succeed", async () => {
    const held = await createWorld(NO_DUPLICATE_GUARD);
    const conversation = await agentConversation(held);
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
    const conversation = await agentConversation(world);
    for (const key of ["", " ", "has space", "é-key", "k".repeat(201)]) {
      const response = await expectNoEffect(world, () =>
        propose(world.keys.agent, conversation, refund(world.orders.o1001, 100), key),
      );
      expect(response.json.code, JSON.stringify(key)).toBe("call-key.missing");
    }
    expect(
      (await propose(world.keys.agent, conversation, refund(world.orders.o1001, 100), "k".repeat(200))).json.code,
    ).toBe("refund.issued");
    expect(
      (await propose(world.keys.agent, conversation, refund(world.orders.o1001, 100), "~!@#$%^&*()")).json.code,
    ).toBe("refund.issued");
  });
});
