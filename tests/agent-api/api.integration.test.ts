import { beforeAll, describe, expect, it, vi } from "vitest";
import { POST as proposeRoute } from "@/app/api/v1/conversations/[id]/tool-calls/route";
import { db } from "@/lib/db";
import { getToolCall, getTools, openConversation, propose } from "../support/api";
import { agentConversation, proposeAsAgent } from "../support/calls";
import { createWorld, type World } from "../support/world";

let world: World;
beforeAll(async () => {
  world = await createWorld();
});

describe("agent API authentication and ownership", () => {
  it("a missing, malformed, unknown or revoked key gets 401", async () => {
    for (const key of ["", "not a key", "tg_unknownunknownunknownunknown"]) {
      expect((await openConversation(key, { customer_id: world.customers.ana })).status).toBe(401);
    }
    const revokedWorld = await createWorld();
    const conversation = await agentConversation(revokedWorld);
    await db.apiKey.updateMany({ where: { userId: revokedWorld.users.agent }, data: { revokedAt: new Date() } });
    const response = await propose(revokedWorld.keys.agent, conversation, {
      name: "get_order",
      arguments: { order_id: revokedWorld.orders.o1001 },
    });
    expect(response.status).toBe(401);
    expect(await db.toolCall.count({ where: { conversationId: conversation } })).toBe(0);
  });

  it("the conversation routes refuse a bad key with 401 before they look at the conversation, and record nothing", async () => {
    const ownWorld = await createWorld();
    const conversation = await agentConversation(ownWorld);
    const read = { name: "get_order", arguments: { order_id: ownWorld.orders.o1001 } };
    for (const key of ["", "not a key", "tg_unknownunknownunknownunknown"]) {
      expect((await propose(key, conversation, read)).status).toBe(401);
      expect((await propose(key, "conv_missing", read)).status).toBe(401);
      expect((await getTools(key, conversation)).status).toBe(401);
    }
    const missing = await propose(ownWorld.keys.agent, "conv_missing", read);
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ error: { code: "not-found", message: "conversation not found" } });

    await db.user.update({ where: { id: ownWorld.users.agent }, data: { active: false } });
    expect((await propose(ownWorld.keys.agent, conversation, read)).status).toBe(401);
    expect((await getTools(ownWorld.keys.agent, conversation)).status).toBe(401);
    expect(await db.toolCall.count({ where: { conversationId: conversation } })).toBe(0);
  });

  it("a client that hangs up while sending its proposal leaves no call and no error in the log", async () => {
    const ownWorld = await createWorld();
    const conversation = await agentConversation(ownWorld);
    const hangUp = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":"get_order","argu'));
        hangUp.signal.addEventListener("abort", () => controller.error(new Error("aborted")));
      },
    });
    const request = new Request(`http://toolgate.test/api/v1/conversations/${conversation}/tool-calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${ownWorld.keys.agent}`, "content-type": "application/json" },
      body,
      duplex: "half",
      signal: hangUp.signal,
    } as RequestInit);
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const answer = proposeRoute(request, { params: Promise.resolve({ id: conversation }) });
      setTimeout(() => hangUp.abort(), 20);
      const response = await answer;
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        error: { code: "request.aborted", message: "the client closed the request before it was read" },
      });
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
    expect(await db.toolCall.count({ where: { conversationId: conversation } })).toBe(0);
  });

  it("another agent's conversation and tool calls are 404, even in the same tenant", async () => {
    const mine = await agentConversation(world);
    const call = await propose(world.keys.agent, mine, {
      name: "get_order",
      arguments: { order_id: world.orders.o1001 },
    });
    const theirs = await propose(world.keys.agent2, mine, {
      name: "get_order",
      arguments: { order_id: world.orders.o1001 },
    });
    expect(theirs.status).toBe(404);
    expect((await getToolCall(world.keys.agent2, call.json.id)).status).toBe(404);
    expect((await getToolCall(world.keys.otherAgent, call.json.id)).status).toBe(404);
    expect((await getTools(world.keys.otherAgent, mine)).status).toBe(404);
    const own = await getToolCall(world.keys.agent, call.json.id);
    expect(own.json).toMatchObject({ id: call.json.id, code: "order.read", kind: "executed" });
  });

  it("opening a conversation: scopes follow the agent's permissions and the requested tools only narrow", async () => {
    const full = await openConversation(world.keys.agent, { customer_id: world.customers.ana });
    expect(full.status).toBe(201);
    expect(full.json.tools).toEqual(["get_order", "issue_refund", "update_shipping_address", "send_status_email"]);
    expect([...full.json.scopes].sort()).toEqual(["email:send", "orders:read", "orders:write", "refunds:write"]);
    const readOnly = await openConversation(world.keys.agent2, { customer_id: world.customers.ana });
    expect(readOnly.json.scopes).not.toContain("refunds:write");
    const narrowed = await openConversation(world.keys.agent, {
      customer_id: world.customers.ana,
      tools: ["get_order"],
    });
    expect(narrowed.json).toMatchObject({ tools: ["get_order"], scopes: ["orders:read"] });
    const unknown = await openConversation(world.keys.agent, {
      customer_id: world.customers.ana,
      tools: ["drop_tables"],
    });
    expect(unknown.status).toBe(400);
    const malformed = await openConversation(world.keys.agent, { customer_id: 7 });
    expect(malformed.status).toBe(400);
  });

  it("the model-facing tool definitions come from the zod schemas, strict and complete", async () => {
    const conversation = await agentConversation(world, "ana", { tools: ["get_order", "issue_refund"] });
    const { json } = await getTools(world.keys.agent, conversation);
    expect(json.tools.map((tool) => tool.name)).toEqual(["get_order", "issue_refund", "get_call_status"]);
    const refund = json.tools[1].input_schema as Record<string, any>;
    expect(refund).toMatchObject({
      type: "object",
      additionalProperties: false,
      required: ["order_id", "amount_cents", "currency", "reason"],
      properties: {
        order_id: { type: "string", pattern: "^ord_[0-9]{4,8}$" },
        amount_cents: { type: "integer", minimum: 1, maximum: 100000 },
        currency: { type: "string", pattern: "^[A-Z]{3}$" },
        reason: {
          type: "string",
          enum: ["damaged", "not_as_described", "late", "not_delivered", "wrong_item", "other"],
        },
      },
    });
    expect(JSON.stringify(json)).not.toMatch(/scope|effect|refunds:write|irreversible/);
  });

  it("GET /tool-calls/{id} of a pending call shows the approval it waits on", async () => {
    const conversation = await agentConversation(world);
    const pending = await proposeAsAgent(world, conversation, {
      name: "issue_refund",
      arguments: { order_id: world.orders.o1004, amount_cents: 9000, currency: "USD", reason: "late" },
    });
    const current = await getToolCall(world.keys.agent, pending.json.id);
    expect(current.json).toMatchObject({
      kind: "pending_approval",
      code: "approval.required",
      approval: { id: pending.json.approval!.id },
    });
  });
});
