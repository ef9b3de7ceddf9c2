import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { getToolsAs, newCallKey, proposeAs } from "../support/api";
import { agentConversation } from "../support/calls";
import { expectNoEffect } from "../support/effects";
import { NO_DUPLICATE_GUARD, createWorld, type World } from "../support/world";

// Provider envelopes are adapted at the edge: only name and arguments reach the sequence, with the same
// limits, and a batch is judged one call at a time.

let world: World;
beforeAll(async () => {
  world = await createWorld(NO_DUPLICATE_GUARD);
});

type Call = { name: string; args: unknown; argsText?: string; extra?: Record<string, unknown> };

const FORMATS: Record<string, (calls: Call[]) => unknown> = {
  "openai-chat": (calls) => ({
    role: "assistant",
    tool_calls: calls.map((call, index) => ({
      id: `call_${index}`,
      type: "function",
      function: { name: call.name, arguments: call.argsText ?? JSON.stringify(call.args), ...call.extra },
    })),
  }),
  "openai-responses": (calls) => ({
    output: [
      { type: "reasoning", id: "rs_1", summary: [] },
      ...calls.map((call, index) => ({
        type: "function_call",
        id: `fc_${index}`,
        call_id: `call_${index}`,
        name: call.name,
        arguments: call.argsText ?? JSON.stringify(call.args),
        status: "completed",
        ...call.extra,
      })),
    ],
  }),
  anthropic: (calls) => ({
    role: "assistant",
    content: [
      { type: "text", text: "Let me check that." },
      ...calls.map((call, index) => ({
        type: "tool_use",
        id: `toolu_${index}`,
        name: call.name,
        input: call.args,
        ...call.extra,
      })),
    ],
  }),
  mcp: (calls) =>
    calls.map((call, index) => ({
      jsonrpc: "2.0",
      id: index + 1,
      method: "tools/call",
      params: { name: call.name, arguments: call.args, _meta: { progressToken: 7 }, ...call.extra },
    })),
};

/** Anthropic and MCP carry arguments as objects, so "a malformed arguments string" is sent as malformed body text. */
function rawWith(format: string, calls: Call[], mutate: (text: string) => string): string {
  return mutate(JSON.stringify(FORMATS[format](calls)));
}

for (const format of Object.keys(FORMATS)) {
  describe(`format=${format}`, () => {
    const read = (order = world.orders.o1001): Call => ({ name: "get_order", args: { order_id: order } });

    it("a valid call runs the sequence and answers the provider's call id", async () => {
      const conversation = await agentConversation(world);
      const response = await proposeAs(world.keys.agent, conversation, format, FORMATS[format]([read()]));
      expect(response.status).toBe(200);
      expect(response.json.results).toHaveLength(1);
      expect(response.json.results[0]).toMatchObject({
        kind: "executed",
        code: "order.read",
        result: { order_id: world.orders.o1001 },
      });
      expect(response.json.results[0].ref).toMatch(/^(call_0|toolu_0|1)$/);
    });

    it("malformed arguments are parse.malformed, with no effect", async () => {
      const conversation = await agentConversation(world);
      const body = format.startsWith("openai")
        ? FORMATS[format]([
            {
              name: "issue_refund",
              args: null,
              argsText: '{"order_id": "' + world.orders.o1001 + '", "amount_cents": 100,',
            },
          ])
        : rawWith(format, [{ name: "issue_refund", args: { order_id: world.orders.o1001 } }], (text) =>
            text.replace(`"${world.orders.o1001}"`, `"${world.orders.o1001}",,`),
          );
      const response = await expectNoEffect(world, () =>
        proposeAs(world.keys.agent, conversation, format, body, newCallKey()),
      );
      expect(response.json.results.map((result) => result.code)).toEqual(["parse.malformed"]);
    });

    it("duplicate keys inside the arguments are refused, never resolved to the last one", async () => {
      const conversation = await agentConversation(world);
      const duplicated = `{"order_id":"${world.orders.o1001}","amount_cents":100,"currency":"USD","reason":"late","amount_cents":99999}`;
      const body = format.startsWith("openai")
        ? FORMATS[format]([{ name: "issue_refund", args: null, argsText: duplicated }])
        : rawWith(
            format,
            [
              {
                name: "issue_refund",
                args: { order_id: world.orders.o1001, amount_cents: 100, currency: "USD", reason: "late" },
              },
            ],
            (text) => text.replace('"reason":"late"', '"reason":"late","amount_cents":99999'),
          );
      const response = await expectNoEffect(world, () =>
        proposeAs(world.keys.agent, conversation, format, body, newCallKey()),
      );
      expect(response.json.results.map((result) => result.code)).toEqual(["parse.duplicate-key"]);
    });

    it("vendor fields around the call never reach the gateway as arguments", async () => {
      const conversation = await agentConversation(world);
      const response = await proposeAs(
        world.keys.agent,
        conversation,
        format,
        FORMATS[format]([{ ...read(), extra: { cache_control: { type: "ephemeral" }, strict: true } }]),
      );
      expect(response.json.results.map((result) => result.code)).toEqual(["order.read"]);
      // Inside the arguments, a vendor-looking field is an argument like any other: refused.
      const inside = await expectNoEffect(world, () =>
        proposeAs(
          world.keys.agent,
          conversation,
          format,
          FORMATS[format]([{ name: "get_order", args: { order_id: world.orders.o1001, _meta: {} } }]),
        ),
      );
      expect(inside.json.results.map((result) => result.code)).toEqual(["schema.invalid"]);
    });

    it("a batch of a valid and an invalid call: the valid one executes, the invalid one does not", async () => {
      const conversation = await agentConversation(world);
      const before = await db.refund.count({ where: { orderId: world.orders.o1001 } });
      const response = await proposeAs(
        world.keys.agent,
        conversation,
        format,
        FORMATS[format]([
          {
            name: "issue_refund",
            args: { order_id: world.orders.o1001, amount_cents: 100, currency: "USD", reason: "late" },
          },
          {
            name: "issue_refund",
            args: {
              order_id: world.orders.o1001,
              amount_cents: 100,
              currency: "USD",
              reason: "late",
              customer_id: world.customers.ben,
            },
          },
        ]),
        newCallKey(),
      );
      expect(response.json.results.map((result) => result.code)).toEqual(["refund.issued", "argument.host-owned"]);
      expect(await db.refund.count({ where: { orderId: world.orders.o1001 } })).toBe(before + 1);
    });

    it("one call's approval grants nothing to the next call of the batch", async () => {
      const conversation = await agentConversation(world);
      const big = {
        name: "issue_refund",
        args: { order_id: world.orders.o1004, amount_cents: 6000, currency: "USD", reason: "late" },
      };
      const response = await expectNoEffect(world, () =>
        proposeAs(world.keys.agent, conversation, format, FORMATS[format]([big, big]), newCallKey()),
      );
      const [first, second] = response.json.results;
      expect([first.code, second.code]).toEqual(["approval.required", "approval.required"]);
      // The same call twice shares one pending request; neither is executed.
      expect(second.approval?.id).toBe(first.approval?.id);
    });
  });
}

describe("a read later in a batch", () => {
  it.each(["openai-chat", "openai-responses", "anthropic"])(
    "%s: sees the batch's earlier refund, even when the payload also names the order in a top-level arguments",
    async (format) => {
      const conversation = await agentConversation(world);
      const order = world.orders.o1004;
      const before = await db.order.findUniqueOrThrow({ where: { id: order }, select: { refundedCents: true } });
      const payload = FORMATS[format]([
        {
          name: "issue_refund",
          args: { order_id: order, amount_cents: 100, currency: "USD", reason: "late" },
        },
        { name: "get_order", args: { order_id: order } },
      ]) as Record<string, unknown>;
      const response = await proposeAs(
        world.keys.agent,
        conversation,
        format,
        { ...payload, arguments: { order_id: order } },
        newCallKey(),
      );
      const [refunded, read] = response.json.results;
      expect([refunded.code, read.code]).toEqual(["refund.issued", "order.read"]);
      const after = await db.order.findUniqueOrThrow({ where: { id: order }, select: { refundedCents: true } });
      expect(after.refundedCents).toBe(before.refundedCents + 100);
      expect(read.result).toMatchObject({ order_id: order, refunded_cents: after.refundedCents });
    },
  );
});

describe("tool definitions per provider, from the same zod schemas", () => {
  it.each(["openai", "anthropic", "mcp"])("%s definitions match their reviewed snapshot", async (format) => {
    const conversation = await agentConversation(world);
    const { json, status } = await getToolsAs(world.keys.agent, conversation, format);
    expect(status).toBe(200);
    await expect(JSON.stringify(json.tools, null, 2)).toMatchFileSnapshot(`./__snapshots__/tools.${format}.json`);
  });

  it("the OpenAI form passes strict mode: every object closed, every property required", async () => {
    const conversation = await agentConversation(world);
    const { json } = await getToolsAs(world.keys.agent, conversation, "openai");
    const strict = (schema: Record<string, any>): boolean =>
      schema.type !== "object" ||
      (schema.additionalProperties === false &&
        JSON.stringify([...(schema.required ?? [])].sort()) ===
          JSON.stringify(Object.keys(schema.properties ?? {}).sort()) &&
        Object.values(schema.properties ?? {}).every((inner) => strict(inner as Record<string, any>)));
    expect(json.tools).toHaveLength(5);
    for (const tool of json.tools) {
      expect(tool).toMatchObject({ type: "function", function: { strict: true } });
      expect(strict(tool.function.parameters)).toBe(true);
    }
  });

  it("every model-facing pattern is one that mainstream regex engines compile: no \\p{...}, no lookbehind, no \\u", async () => {
    const conversation = await agentConversation(world);
    const { json } = await getToolsAs(world.keys.agent, conversation, "mcp");
    const patterns: string[] = [];
    const collect = (schema: unknown): void => {
      if (typeof schema !== "object" || schema === null) return;
      for (const [key, value] of Object.entries(schema)) {
        if (key === "pattern" && typeof value === "string") patterns.push(value);
        else collect(value);
      }
    };
    collect(json.tools);
    expect(patterns.length).toBeGreaterThanOrEqual(4);
    for (const pattern of patterns) {
      expect(pattern).not.toMatch(/\\[pPu]|\(\?<|\(\?[=!]/);
      // Without the u flag, as engines without Unicode property classes read it, and with it.
      expect(() => new RegExp(pattern)).not.toThrow();
      expect(() => new RegExp(pattern, "u")).not.toThrow();
    }
    const line1 = json.tools.find((tool) => tool.name === "update_shipping_address")!.inputSchema.properties.line1
      .pattern;
    expect(new RegExp(line1).test("4 Elm\nSt")).toBe(false);
  });

  it("an unknown format is a 400", async () => {
    const conversation = await agentConversation(world);
    expect((await getToolsAs(world.keys.agent, conversation, "soap")).status).toBe(400);
    expect((await proposeAs(world.keys.agent, conversation, "soap", {})).status).toBe(400);
  });
});
