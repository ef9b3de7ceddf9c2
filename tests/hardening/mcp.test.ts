import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { MCP_CALL_KEY_META } from "@/lib/agent-api/mcp/server";
import { conversationOver } from "../support/api-over-http";
import { connectMcp, DEFAULT_TOOL_NAMES } from "../support/mcp-client";
import { expectNoEffect } from "../support/effects";
import { ownProvider } from "../support/externals";
import { ownInstances } from "../support/own-instances";
import { createWorld, type World } from "../support/world";

// The official MCP SDK client against the running production build.

const provider = ownProvider();
const [instance] = ownInstances(1, () => provider.env());
let world: World;
let conversation: string;

beforeAll(async () => {
  world = await createWorld();
  conversation = await conversationOver(instance.url, world.keys.agent, world.customers.ana);
});

const text = (result: Record<string, unknown>) => (result.content as { type: string; text: string }[])[0].text;

describe("MCP server at /api/mcp", () => {
  it("lists only the conversation's tools, with the schemas the gateway enforces", async () => {
    const client = await connectMcp(instance.url, world.keys.agent, conversation);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(DEFAULT_TOOL_NAMES);
    expect(tools[1].inputSchema).toMatchObject({
      type: "object",
      additionalProperties: false,
      required: ["order_id", "amount_cents", "currency", "reason"],
    });
    await client.close();
  });

  it("calls get_order through the gateway", async () => {
    const client = await connectMcp(instance.url, world.keys.agent, conversation);
    const result = await client.callTool({ name: "get_order", arguments: { order_id: world.orders.o1001 } });
    expect(result.isError).toBe(false);
    expect(JSON.parse(text(result))).toEqual({
      status: "ok",
      call_id: expect.stringMatching(/^call_/),
      result: {
        order_id: world.orders.o1001,
        status: "delivered",
        total_cents: 4200,
        refunded_cents: 0,
        currency: "USD",
      },
    });
    expect(result.structuredContent).toEqual(JSON.parse(text(result)));
    await client.close();
  });

  it("refuses another customer's order with exactly the result of a missing order", async () => {
    const client = await connectMcp(instance.url, world.keys.agent, conversation);
    const foreign = await expectNoEffect(world, () =>
      client.callTool({ name: "get_order", arguments: { order_id: world.orders.o1002 } }),
    );
    const missing = await client.callTool({ name: "get_order", arguments: { order_id: "ord_99999999" } });
    expect(foreign.isError).toBe(true);
    const { call_id: _foreignId, ...foreignShown } = foreign.structuredContent as Record<string, unknown>;
    const { call_id: _missingId, ...missingShown } = missing.structuredContent as Record<string, unknown>;
    expect(foreignShown).toEqual(missingShown);
    expect(foreignShown).toEqual({ status: "not_found", message: expect.stringContaining("never a guessed one") });
    await client.close();
  });

  it("holds a large refund for approval: a normal tool result with the call's id and expiry, and no effect", async () => {
    const client = await connectMcp(instance.url, world.keys.agent, conversation);
    const result = await expectNoEffect(world, () =>
      client.callTool({
        name: "issue_refund",
        arguments: { order_id: world.orders.o1004, amount_cents: 8000, currency: "USD", reason: "damaged" },
        _meta: { [MCP_CALL_KEY_META]: "mcp-refund-1" },
      }),
    );
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toEqual({
      status: "needs_approval",
      call_id: expect.stringMatching(/^call_/),
      expires_at: expect.any(String),
      message: expect.stringContaining("A supervisor must approve this call before it runs"),
    });
    expect(await db.approvalRequest.count({ where: { conversationId: conversation, status: "pending" } })).toBe(1);
    await client.close();
  });

  it("an unknown tool is a protocol error, and a host-owned argument an isError result", async () => {
    const client = await connectMcp(instance.url, world.keys.agent, conversation);
    await expect(client.callTool({ name: "drop_tables", arguments: {} })).rejects.toThrow(/unknown tool/);
    const forged = await client.callTool({
      name: "get_order",
      arguments: { order_id: world.orders.o1001, customer_id: world.customers.ben },
    });
    expect(forged.isError).toBe(true);
    expect(forged.structuredContent).toMatchObject({ status: "invalid_arguments", paths: ["customer_id"] });
    await client.close();
  });

  it("refuses a bad key and another agent's conversation", async () => {
    await expect(connectMcp(instance.url, "tg_not_a_real_key_at_all", conversation)).rejects.toThrow();
    await expect(connectMcp(instance.url, world.keys.agent2, conversation)).rejects.toThrow();
  });
});
