import { beforeAll, describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { pruneRateBuckets } from "@/lib/gateway/checks/rate";
import { getOrder } from "@/lib/tools/get-order";
import { conversationFor, getToolCall, getTools, newCallKey, propose, proposeAs, type CallBody } from "../support/api";
import { agentConversation, holdRefund, proposeAsAgent, refund } from "../support/calls";
import { expectNoEffect } from "../support/effects";
import { createWorld, type World } from "../support/world";

// The refusal matrix: every reason code the gateway can reach before execution, through the HTTP route,
// each with its kind and stage and with every effect store unchanged.

let world: World;
beforeAll(async () => {
  world = await createWorld();
});

async function refused(
  body: unknown,
  expected: { kind: string; stage: string; code: string },
  options: { key?: string; conversation?: Record<string, unknown>; callKey?: string | null } = {},
): Promise<CallBody> {
  const key = options.key ?? world.keys.agent;
  const conversation = await conversationFor(key, options.conversation ?? { customer_id: world.customers.ana });
  const response = await expectNoEffect(world, () =>
    propose(key, conversation, body, options.callKey === null ? undefined : (options.callKey ?? newCallKey())),
  );
  expect(response.status).toBe(200);
  expect({ kind: response.json.kind, stage: response.json.stage, code: response.json.code }).toEqual(expected);
  // A proposal that is no call has no argument path to point at: the model is told in words what to send instead.
  if (expected.stage === "parse")
    expect(response.json.model).toEqual({
      status: "invalid_arguments",
      paths: [],
      message: expect.stringMatching(/^The proposal .+ Send /),
    });
  const logged = await db.decisionLog.findMany({ where: { toolCallId: response.json.id } });
  expect(logged.map((row) => row.code)).toEqual([expected.code]);
  return response.json;
}

const rejected = (stage: string, code: string) => ({ kind: "rejected", stage, code });

/** Waits out the last seconds of a minute, so a test's calls share one rate window (a new one starts each minute). */
async function clearOfMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 55) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
}

describe("parse", () => {
  it("parse.too-large: more than 16 KiB of bytes, counted before parsing", async () => {
    const body = JSON.stringify({
      name: "get_order",
      arguments: { order_id: world.orders.o1001, pad: "x".repeat(16 * 1024) },
    });
    await refused(body, rejected("parse", "parse.too-large"));
  });
  it("parse.too-large counts bytes, not characters", async () => {
    const body = JSON.stringify({
      name: "get_order",
      arguments: { order_id: world.orders.o1001, pad: "é".repeat(8200) },
    });
    expect(body.length).toBeLessThan(16 * 1024);
    await refused(body, rejected("parse", "parse.too-large"));
  });
  it("parse.too-deep: nesting deeper than 8", async () => {
    let nested: unknown = 1;
    for (let i = 0; i < 8; i++) nested = { a: nested };
    await refused({ name: "get_order", arguments: nested }, rejected("parse", "parse.too-deep"));
  });
  it("parse.malformed: not JSON, trailing text, invalid UTF-8", async () => {
    await refused('{"name": "get_order", "arguments": {', rejected("parse", "parse.malformed"));
    await refused('{"name":"get_order","arguments":{}} x', rejected("parse", "parse.malformed"));
    await refused(new Uint8Array([0x7b, 0xff, 0x7d]), rejected("parse", "parse.malformed"));
  });
  it("parse.malformed: an invalid byte inside a string is refused, not replaced with U+FFFD and passed on", async () => {
    const before = new TextEncoder().encode(`{"name":"get_order","arguments":{"order_id":"${world.orders.o1001}`);
    const after = new TextEncoder().encode(`"}}`);
    await refused(new Uint8Array([...before, 0xc3, ...after]), rejected("parse", "parse.malformed"));
  });
  it("parse.malformed: anything but a comma between members or elements, or a colon after a key", async () => {
    const order = world.orders.o1001;
    await refused(`{"name":"get_order";"arguments":{"order_id":"${order}"}}`, rejected("parse", "parse.malformed"));
    await refused(`{"name"="get_order","arguments":{"order_id":"${order}"}}`, rejected("parse", "parse.malformed"));
    await refused(
      `{"name":"get_order","arguments":{"order_id":["${order}";"${order}"]}}`,
      rejected("parse", "parse.malformed"),
    );
  });
  it("parse.duplicate-key: at the top and inside arguments, even when escaped differently", async () => {
    await refused(
      `{"name":"get_order","name":"issue_refund","arguments":{}}`,
      rejected("parse", "parse.duplicate-key"),
    );
    await refused(
      `{"name":"get_order","arguments":{"order_id":"${world.orders.o1001}","order_\\u0069d":"${world.orders.o1002}"}}`,
      rejected("parse", "parse.duplicate-key"),
    );
  });
  it("parse.envelope-invalid: extra keys, wrong types, arrays", async () => {
    await refused({ name: "get_order", arguments: [] }, rejected("parse", "parse.envelope-invalid"));
    await refused({ name: "get_order", arguments: {}, approved: true }, rejected("parse", "parse.envelope-invalid"));
    await refused({ name: 7, arguments: {} }, rejected("parse", "parse.envelope-invalid"));
    await refused([{ name: "get_order", arguments: {} }], rejected("parse", "parse.envelope-invalid"));
  });
});

const NO_SUCH_TOOL =
  "No tool of that name is offered in this conversation. Call only the tools listed for it, by their exact names.";

/** The call's own row, as a later read of the call answers from it. */
const callRow = (id: string) => db.toolCall.findUniqueOrThrow({ where: { id } });

describe("allowlist and scope", () => {
  it("tool.unknown: names are exact and case-sensitive; prototype names are not tools", async () => {
    const misspelled = await refused(
      { name: "Get_Order", arguments: { order_id: world.orders.o1001 } },
      rejected("allowlist", "tool.unknown"),
    );
    // The model is told to call the conversation's tools by their exact names, and which it meant; the name it sent
    // is not echoed.
    expect(misspelled.model).toEqual({ status: "not_allowed", message: `${NO_SUCH_TOOL} Did you mean get_order?` });
    await refused({ name: "constructor", arguments: {} }, rejected("allowlist", "tool.unknown"));
  });
  it("tool.unknown: a misspelling of one of the conversation's tools is told that tool's name, and the call keeps it", async () => {
    for (const [called, meant] of [
      ["get_ordr", "get_order"],
      ["issueRefund", "issue_refund"],
      ["issue-refund", "issue_refund"],
      ["get_call_stats", "get_call_status"],
    ]) {
      const body = await refused({ name: called, arguments: {} }, rejected("allowlist", "tool.unknown"));
      expect(body.model).toEqual({ status: "not_allowed", message: `${NO_SUCH_TOOL} Did you mean ${meant}?` });
      const row = await callRow(body.id);
      expect([row.toolName, row.code]).toEqual(["(unknown)", "tool.unknown"]);
      expect((await getToolCall(world.keys.agent, body.id)).json.model).toEqual(body.model);
    }
  });
  it("tool.unknown: a provider's payload is told the name too, each call of it on its own", async () => {
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const openai = await proposeAs(world.keys.agent, conversation, "openai-chat", {
      role: "assistant",
      tool_calls: [
        { id: "call_typo", type: "function", function: { name: "get_ordr", arguments: "{}" } },
        { id: "call_none", type: "function", function: { name: "drop_tables", arguments: "{}" } },
      ],
    });
    const anthropic = await proposeAs(world.keys.agent, conversation, "anthropic", {
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_typo", name: "issueRefund", input: {} }],
    });
    const mcp = await proposeAs(world.keys.agent, conversation, "mcp", {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "send-status-email", arguments: {} },
    });
    const results = [...openai.json.results, ...anthropic.json.results, ...mcp.json.results];
    expect(results.map((result) => [result.code, result.model.message])).toEqual([
      ["tool.unknown", `${NO_SUCH_TOOL} Did you mean get_order?`],
      ["tool.unknown", NO_SUCH_TOOL],
      ["tool.unknown", `${NO_SUCH_TOOL} Did you mean issue_refund?`],
      ["tool.unknown", `${NO_SUCH_TOOL} Did you mean send_status_email?`],
    ]);
    const logged = await db.decisionLog.findMany({ where: { toolCallId: { in: results.map((result) => result.id) } } });
    expect(logged.map((row) => [row.toolName, row.code])).toEqual(Array(4).fill(["(unknown)", "tool.unknown"]));
  });
  it("tool.unknown: a misspelling of a tool the conversation cannot call is answered as any unknown name is", async () => {
    const narrow = { customer_id: world.customers.ana, tools: ["get_order"] };
    const unknown = rejected("allowlist", "tool.unknown");
    const random = await refused({ name: "drop_tables", arguments: {} }, unknown, { conversation: narrow });
    expect(random.model).toEqual({ status: "not_allowed", message: NO_SUCH_TOOL });
    const randomRow = await callRow(random.id);
    const answers = [];
    for (const called of ["issue_refnd", "issueRefund", "send_status_mail", "update-shipping-address"])
      answers.push(await refused({ name: called, arguments: {} }, unknown, { conversation: narrow }));
    // Nor a tool the conversation has but may not call: the second agent holds no refund scope.
    answers.push(await refused({ name: "issueRefund", arguments: {} }, unknown, { key: world.keys.agent2 }));
    for (const answer of answers) {
      expect(answer.model).toEqual(random.model);
      const row = await callRow(answer.id);
      expect([row.toolName, row.code, row.outcome]).toEqual([randomRow.toolName, randomRow.code, randomRow.outcome]);
    }
  });
  it("tool.unknown: a name near none of the conversation's tools is told none", async () => {
    for (const called of ["drop_tables", "refund", "get_status", "delete_order", "get_orders_and_refunds"]) {
      const body = await refused({ name: called, arguments: {} }, rejected("allowlist", "tool.unknown"));
      expect(body.model).toEqual({ status: "not_allowed", message: NO_SUCH_TOOL });
    }
  });
  it("tool.not-available: a registered tool this conversation does not expose", async () => {
    await refused(refund(world.orders.o1004, 1000), rejected("allowlist", "tool.not-available"), {
      conversation: { customer_id: world.customers.ana, tools: ["get_order"] },
    });
  });
  it("scope.missing: an agent without the refund permission, told that a person has to do it", async () => {
    const body = await refused(
      refund(world.orders.o1004, 1000),
      { kind: "denied", stage: "scope", code: "scope.missing" },
      { key: world.keys.agent2 },
    );
    expect(body.model).toEqual({ status: "not_allowed", message: expect.stringMatching(/a person has to do this\.$/) });
  });
});

describe("schema and semantic", () => {
  it("argument.host-owned: refused by name in any casing or separator", async () => {
    for (const field of ["customer_id", "Customer_ID", "tenantId", "APPROVED", "idempotency-key", "version"]) {
      const body = await refused(
        refund(world.orders.o1004, 1000, { [field]: "x" }),
        rejected("schema", "argument.host-owned"),
      );
      expect(body.model).toEqual({
        status: "invalid_arguments",
        paths: [field],
        message: `Fix these arguments, then propose the call again. ${field}: set by the host: leave it out.`,
      });
    }
  });
  it("schema.invalid: unknown fields and missing fields, naming paths but never values", async () => {
    const body = await refused(
      refund(world.orders.o1004, 1000, { note: "SECRET-VALUE" }),
      rejected("schema", "schema.invalid"),
    );
    expect(body.model.paths).toEqual(["note"]);
    expect(JSON.stringify(body)).not.toContain("SECRET-VALUE");
    const missing = await refused({ name: "get_order", arguments: {} }, rejected("schema", "schema.invalid"));
    expect(missing.model.paths).toEqual(["order_id"]);
  });
  it("a refusal lists at most ten paths, however many fields are wrong", async () => {
    const unknown = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`extra_${i}`, i]));
    const many = await refused(refund(world.orders.o1004, 1000, unknown), rejected("schema", "schema.invalid"));
    expect(many.issues).toHaveLength(10);
    const owned = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`note_${i}`, { customer_id: "x" }]));
    const hostOwned = await refused(refund(world.orders.o1004, 1000, owned), rejected("schema", "argument.host-owned"));
    expect(hostOwned.issues).toHaveLength(10);
  });
  // The model reads which argument to fix and what it must be, never the value it sent.
  const toFix = (problem: string) => `Fix these arguments, then propose the call again. ${problem}.`;
  it("amount.invalid: outside 1..100000", async () => {
    const zero = await refused(
      refund(world.orders.o1004, 1000, { amount_cents: 0 }),
      rejected("semantic", "amount.invalid"),
    );
    expect(zero.model).toEqual({
      status: "invalid_arguments",
      paths: ["amount_cents"],
      message: toFix("amount_cents: must be at least 1"),
    });
    const large = await refused(
      refund(world.orders.o1004, 1000, { amount_cents: 100001 }),
      rejected("semantic", "amount.invalid"),
    );
    expect(large.model.message).toBe(toFix("amount_cents: must be at most 100000"));
  });
  it("currency.invalid: not three uppercase ASCII letters", async () => {
    const body = await refused(
      refund(world.orders.o1004, 1000, { currency: "usd" }),
      rejected("semantic", "currency.invalid"),
    );
    expect(body.model.message).toBe(toFix("currency: must match the pattern ^[A-Z]{3}$"));
  });
  it("reason.invalid: not one of the reasons", async () => {
    const body = await refused(
      refund(world.orders.o1004, 1000, { reason: "because" }),
      rejected("semantic", "reason.invalid"),
    );
    expect(body.model.paths).toEqual(["reason"]);
    expect(body.model.message).toMatch(/^Fix these arguments, then propose the call again\. reason: must be one of "/);
    expect(JSON.stringify(body)).not.toContain("because");
  });
});

describe("context, idempotency and state", () => {
  it("order.not-found: another customer's order, told to the model in the words of an order that does not exist", async () => {
    const foreign = await refused(refund(world.orders.o1002, 1000), rejected("context", "order.not-found"));
    const missing = await refused(refund("ord_99999999", 1000), rejected("context", "order.not-found"));
    expect(foreign.model).toEqual({ status: "not_found", message: expect.stringMatching(/never a guessed one/) });
    expect(missing.model).toEqual(foreign.model);
  });
  it("call-key.missing: a write whose Idempotency-Key is not a key", async () => {
    await refused(refund(world.orders.o1004, 1000), rejected("idempotency", "call-key.missing"), {
      callKey: "has space",
    });
  });
  it("call-key.reused: one key, other arguments", async () => {
    const conversation = await agentConversation(world);
    const key = newCallKey();
    const first = await propose(
      world.keys.agent,
      conversation,
      refund(world.orders.o1001, 1000, { amount_cents: 100 }),
      key,
    );
    expect(first.json.code).toBe("refund.issued");
    const second = await expectNoEffect(world, () =>
      propose(world.keys.agent, conversation, refund(world.orders.o1001, 1000, { amount_cents: 200 }), key),
    );
    expect(second.json).toMatchObject(rejected("idempotency", "call-key.reused"));
  });
  it("order.not-delivered: refund of an order still processing, and the model is told not to ask again now", async () => {
    const body = await refused(refund(world.orders.o1003, 1000), rejected("state", "order.not-delivered"));
    expect(body.model).toEqual({
      status: "not_allowed",
      message: expect.stringMatching(/^Only a delivered order can be refunded.+Do not propose the refund again now/),
    });
  });
  it("order.already-shipped: address change of a delivered order", async () => {
    await refused(
      {
        name: "update_shipping_address",
        arguments: { order_id: world.orders.o1001, line1: "2 Elm St", postal_code: "94107" },
      },
      rejected("state", "order.already-shipped"),
    );
  });
  it("currency.mismatch: a currency other than the order's", async () => {
    await refused(refund(world.orders.o1004, 1000, { currency: "EUR" }), rejected("state", "currency.mismatch"));
  });
  it("amount.exceeds-refundable: more than is left to refund, and the model is told to read the order and ask less", async () => {
    const body = await refused(
      refund(world.orders.o1001, 1000, { amount_cents: 4201 }),
      rejected("state", "amount.exceeds-refundable"),
    );
    expect(body.model).toEqual({
      status: "not_allowed",
      message:
        "The amount is more than this order has left to refund. Read the order with get_order (total_cents less refunded_cents is what is left) and propose at most that, or tell the user.",
    });
  });
  it("refund.in-progress: an order with an unsettled refund", async () => {
    const held = await createWorld();
    await db.order.update({ where: { id: held.orders.o1004 }, data: { refundPending: true } });
    const previous = world;
    world = held;
    try {
      await refused(refund(held.orders.o1004, 1000), {
        kind: "unavailable",
        stage: "state",
        code: "refund.in-progress",
      });
    } finally {
      world = previous;
    }
  });
});

describe("policy and approval", () => {
  it("agent.not-authorized: a permission revoked while the conversation is open", async () => {
    const revoked = await createWorld();
    const conversation = await agentConversation(revoked);
    await db.user.update({ where: { id: revoked.users.agent }, data: { canRefund: false } });
    const response = await expectNoEffect(revoked, () =>
      proposeAsAgent(revoked, conversation, refund(revoked.orders.o1004, 1000)),
    );
    expect(response.json).toMatchObject({ kind: "denied", stage: "policy", code: "agent.not-authorized" });
  });
  it("order.fraud-hold: denied, and the model is not told why", async () => {
    const body = await refused(refund(world.orders.o1005, 1000), {
      kind: "denied",
      stage: "policy",
      code: "order.fraud-hold",
    });
    // Told not to ask again, in the words of every denial whose cause the model may not learn.
    expect(body.model).toEqual({ status: "not_allowed", message: expect.stringMatching(/^This call is not allowed/) });
    expect(JSON.stringify(body.model)).not.toContain("fraud");
  });
  it("approval.required: above the auto limit, with a preview and no effect", async () => {
    const body = await refused(refund(world.orders.o1004, 1000, { amount_cents: 8000 }), {
      kind: "pending_approval",
      stage: "approval",
      code: "approval.required",
    });
    expect(body.approval?.preview.order).toMatchObject({
      total_cents: 15000,
      refunded_cents: 0,
      refundable_cents: 15000,
    });
  });
});

describe("rate and host errors", () => {
  it("rate.limited: 429 with Retry-After once the conversation's window is spent, before parsing", async () => {
    const limited = await createWorld({ rateConversationPerMin: 2 });
    const conversation = await agentConversation(limited);
    const read = { name: "get_order", arguments: { order_id: limited.orders.o1001 } };
    expect((await propose(limited.keys.agent, conversation, read)).status).toBe(200);
    expect((await propose(limited.keys.agent, conversation, read)).status).toBe(200);
    const third = await expectNoEffect(limited, () => proposeAsAgent(limited, conversation, "not even json"));
    expect(third.status).toBe(429);
    // The seconds left in this minute's window, give or take the second the call took.
    const left = 60 - new Date().getUTCSeconds();
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(Math.max(1, left - 2));
    expect(Number(third.headers.get("retry-after"))).toBeLessThanOrEqual(left + 1);
    expect(third.json).toMatchObject(rejected("rate", "rate.limited"));
  });
  it("rate.limited: the per-key limit spans conversations", async () => {
    const limited = await createWorld({ rateKeyPerMin: 2 });
    const read = (order: string) => ({ name: "get_order", arguments: { order_id: order } });
    for (let i = 0; i < 2; i++) {
      const conversation = await agentConversation(limited);
      expect((await propose(limited.keys.agent, conversation, read(limited.orders.o1001))).status).toBe(200);
    }
    const conversation = await agentConversation(limited);
    const third = await propose(limited.keys.agent, conversation, read(limited.orders.o1001));
    expect(third.status).toBe(429);
  });
  it("every call counts once: the route counts in its key lookup, a batch's further calls count themselves, reading tools counts nothing", async () => {
    await clearOfMinuteEnd();
    const limited = await createWorld({ rateConversationPerMin: 3 });
    const conversation = await agentConversation(limited);
    const read = { name: "get_order", arguments: { order_id: limited.orders.o1001 } };
    const batch = {
      role: "assistant",
      content: [0, 1].map((index) => ({
        type: "tool_use",
        id: `toolu_${index}`,
        name: read.name,
        input: read.arguments,
      })),
    };
    const both = await proposeAs(limited.keys.agent, conversation, "anthropic", batch);
    expect(both.json.results.map((result) => result.code)).toEqual(["order.read", "order.read"]);
    expect((await getTools(limited.keys.agent, conversation)).status).toBe(200);
    expect((await propose(limited.keys.agent, conversation, read)).status).toBe(200);
    const fourth = await propose(limited.keys.agent, conversation, read);
    expect(fourth.status).toBe(429);
    const buckets = await db.rateBucket.findMany({
      where: { key: { in: [`c:${conversation}`, `a:${limited.users.agent}`] } },
      orderBy: { key: "asc" },
    });
    expect(buckets.map((bucket) => [bucket.key, bucket.count])).toEqual([
      [`a:${limited.users.agent}`, 4],
      [`c:${conversation}`, 4],
    ]);
  });
  it("rate.limited: reading a call spends the agent's budget with its calls, once however long it waits; past it 429 with Retry-After", async () => {
    await clearOfMinuteEnd();
    const limited = await createWorld({ rateKeyPerMin: 4 });
    const { conversation, callId } = await holdRefund(limited);
    const bucket = (agent: string) => db.rateBucket.findUnique({ where: { key: `a:${agent}` } });
    const waited = Date.now();
    expect((await getToolCall(limited.keys.agent, callId, "?wait=1")).json.code).toBe("approval.required");
    expect(Date.now() - waited).toBeGreaterThanOrEqual(950);
    expect(await bucket(limited.users.agent)).toMatchObject({ count: 2 });
    for (let i = 0; i < 2; i++) expect((await getToolCall(limited.keys.agent, callId)).status).toBe(200);
    const over = await getToolCall(limited.keys.agent, callId, "?wait=30");
    expect(over.status).toBe(429);
    expect(over.json).toEqual({ error: { code: "rate.limited", message: expect.any(String) } });
    const left = 60 - new Date().getUTCSeconds();
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(Math.max(1, left - 2));
    expect(Number(over.headers.get("retry-after"))).toBeLessThanOrEqual(left + 1);
    // One budget: the agent's next call is refused too; another agent's is its own, and a read is no conversation's.
    const read = { name: "get_order", arguments: { order_id: limited.orders.o1001 } };
    expect((await propose(limited.keys.agent, conversation, read)).status).toBe(429);
    expect((await getToolCall(limited.keys.agent2, callId)).status).toBe(404);
    expect(await bucket(limited.users.agent)).toMatchObject({ count: 6 });
    expect(await bucket(limited.users.agent2)).toMatchObject({ count: 1 });
    expect(await db.rateBucket.findUnique({ where: { key: `c:${conversation}` } })).toMatchObject({ count: 2 });
  });
  it("pruning drops ended windows only: a conversation that spent this minute's window stays limited", async () => {
    await clearOfMinuteEnd();
    const limited = await createWorld({ rateConversationPerMin: 2 });
    const conversation = await agentConversation(limited);
    const read = { name: "get_order", arguments: { order_id: limited.orders.o1001 } };
    for (let i = 0; i < 2; i++) expect((await propose(limited.keys.agent, conversation, read)).status).toBe(200);
    const ended = `c:ended-${conversation}`;
    await db.rateBucket.create({ data: { key: ended, windowStart: new Date(Date.now() - 5 * 60_000), count: 9 } });

    expect(await pruneRateBuckets(db)).toBeGreaterThanOrEqual(1);
    expect(await db.rateBucket.findUnique({ where: { key: ended } })).toBeNull();
    expect(await db.rateBucket.findUnique({ where: { key: `c:${conversation}` } })).toMatchObject({ count: 2 });
    expect((await propose(limited.keys.agent, conversation, read)).status).toBe(429);
  });
  it("host.error: an exception inside a tool is unavailable, logged, and never a stack trace", async () => {
    const spy = vi.spyOn(getOrder, "execute").mockImplementationOnce(() => {
      throw new Error("disk on fire at /srv/secret/path");
    });
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const body = await refused(
        { name: "get_order", arguments: { order_id: world.orders.o1001 } },
        {
          kind: "unavailable",
          stage: "execute",
          code: "host.error",
        },
      );
      expect(JSON.stringify(body)).not.toMatch(/disk on fire|secret|at .*\.ts/);
      expect(errors).toHaveBeenCalledWith(expect.stringContaining("disk on fire"));
    } finally {
      spy.mockRestore();
      errors.mockRestore();
    }
  });
});
