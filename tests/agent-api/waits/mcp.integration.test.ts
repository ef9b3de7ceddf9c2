import { beforeAll, describe, expect, it } from "vitest";
import { GET as wellKnown } from "@/app/.well-known/[...path]/route";
import { GET as underMcp } from "@/app/api/mcp/[...path]/route";
import { POST as mcpRoute } from "@/app/api/mcp/route";
import { denyRequest } from "@/lib/approvals/decision/deny";
import { db } from "@/lib/db";
import { conversationFor } from "../../support/api";
import { agentConversation, refundArguments } from "../../support/calls";
import { connectMcp, expectHeldResult } from "../../support/mcp-client";
import { createWorld, type World } from "../../support/world";
import { MCP_BASE, routeFetch } from "../../support/mcp-route";

// The MCP route handler in process, through the official SDK client: protocol hygiene, call keys without the
// client's help, held calls that are no error. tests/hardening/mcp.test.ts drives the production build.

let world: World;
beforeAll(async () => {
  world = await createWorld();
});

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};
function post(conversation: string, headers: Record<string, string>, body: unknown = initialize) {
  return mcpRoute(
    new Request(`${MCP_BASE}/api/mcp?conversation=${conversation}`, {
      method: "POST",
      headers: {
        host: "127.0.0.1:3000",
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        ...headers,
      },
      body: JSON.stringify(body),
    }),
  );
}

describe("protocol hygiene on /api/mcp", () => {
  it("refuses a foreign Host or Origin with 403 even with a valid key, and takes loopback and configured origins", async () => {
    const conversation = await agentConversation(world);
    const auth = { authorization: `Bearer ${world.keys.agent}` };
    expect((await post(conversation, { ...auth, host: "evil.example:3000" })).status).toBe(403);
    const foreign = await post(conversation, { ...auth, origin: "http://evil.example" });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { message: expect.stringContaining("Origin") },
    });
    expect((await post(conversation, { ...auth, origin: "http://localhost:6274" })).status).toBe(200);
    expect((await post(conversation, { ...auth, origin: "https://inspector.example" })).status).toBe(403);
    process.env.MCP_ALLOWED_ORIGINS = "https://inspector.example";
    try {
      expect((await post(conversation, { ...auth, origin: "https://inspector.example" })).status).toBe(200);
    } finally {
      delete process.env.MCP_ALLOWED_ORIGINS;
    }
    expect(await db.toolCall.count({ where: { conversationId: conversation } })).toBe(0);
  });

  it("answers to the Host of OAUTH_ISSUER, the address OAuth clients are given", async () => {
    const conversation = await agentConversation(world);
    const auth = { authorization: `Bearer ${world.keys.agent}` };
    expect((await post(conversation, { ...auth, host: "toolgate.example.com" })).status).toBe(403);
    process.env.OAUTH_ISSUER = "https://toolgate.example.com";
    try {
      expect((await post(conversation, { ...auth, host: "toolgate.example.com" })).status).toBe(200);
      expect((await post(conversation, { ...auth, origin: "https://toolgate.example.com" })).status).toBe(200);
    } finally {
      delete process.env.OAUTH_ISSUER;
    }
  });

  it("a missing or bad key is a JSON 401 naming the resource metadata, and other discovery paths answer JSON 404", async () => {
    const conversation = await agentConversation(world);
    for (const [headers, code] of [
      [{}, "auth.required"],
      [{ authorization: "Bearer tg_not_a_key" }, "auth.invalid-token"],
    ] as [Record<string, string>, string][]) {
      const response = await post(conversation, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(
        /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:3000\/\.well-known\/oauth-protected-resource\/api\/mcp"/,
      );
      expect(await response.json()).toEqual({ error: { code, message: expect.any(String) } });
    }
    for (const response of [wellKnown(), underMcp()]) {
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await response.json()).toEqual({
        error: { code: "not-found", message: expect.stringContaining("/.well-known/oauth-authorization-server") },
      });
    }
  });

  it("an unknown tool's error message carries the JSON-RPC code once", async () => {
    const conversation = await agentConversation(world);
    const client = await connectMcp(MCP_BASE, world.keys.agent, conversation, routeFetch);
    const failure = await client.callTool({ name: "drop_tables", arguments: {} }).catch((error: Error) => error);
    expect((failure as Error).message).toBe("MCP error -32602: unknown tool: drop_tables");
    await client.close();
  });

  it("an unknown tool's error names the conversation's tool a misspelling meant, never one it was not given", async () => {
    const wide = await agentConversation(world);
    const narrow = await conversationFor(world.keys.agent, { customer_id: world.customers.ana, tools: ["get_order"] });
    const failures: string[] = [];
    for (const [conversation, name] of [
      [wide, "get_ordr"],
      [wide, "issueRefund"],
      [narrow, "issueRefund"],
      [narrow, "drop_tables"],
    ]) {
      const client = await connectMcp(MCP_BASE, world.keys.agent, conversation, routeFetch);
      const failure = await client.callTool({ name, arguments: {} }).catch((error: Error) => error);
      failures.push((failure as Error).message);
      await client.close();
    }
    expect(failures).toEqual([
      "MCP error -32602: unknown tool: get_ordr; did you mean get_order?",
      "MCP error -32602: unknown tool: issueRefund; did you mean issue_refund?",
      "MCP error -32602: unknown tool: issueRefund",
      "MCP error -32602: unknown tool: drop_tables",
    ]);
    const rows = await db.toolCall.findMany({
      where: { conversationId: { in: [wide, narrow] } },
      orderBy: { createdAt: "asc" },
    });
    expect(rows.map((row) => [row.toolName, row.code, (row.outcome as { nearest?: string }).nearest])).toEqual([
      ["(unknown)", "tool.unknown", "get_order"],
      ["(unknown)", "tool.unknown", "issue_refund"],
      ["(unknown)", "tool.unknown", undefined],
      ["(unknown)", "tool.unknown", undefined],
    ]);
    const logged = await db.decisionLog.findMany({ where: { toolCallId: { in: rows.map((row) => row.id) } } });
    expect(logged.map((row) => row.code)).toEqual(Array(4).fill("tool.unknown"));
  });

  it("gives each call of a JSON-RPC batch its own key under one Idempotency-Key header", async () => {
    const own = await createWorld();
    const conversation = await agentConversation(own);
    // Two orders: a refund blocks its order until the provider answers, and a batch's calls run side by side.
    const call = (id: number, order: string) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "issue_refund", arguments: refundArguments(order, 100) },
    });
    const response = await post(
      conversation,
      { authorization: `Bearer ${own.keys.agent}`, "idempotency-key": "fixed" },
      [call(1, own.orders.o1001), call(2, own.orders.o1004)],
    );
    const answers = (await response.json()) as { result: { structuredContent: { status: string } } }[];
    expect(answers.map((answer) => answer.result.structuredContent.status)).toEqual(["ok", "ok"]);
    const keys = await db.toolCall.findMany({
      where: { conversationId: conversation },
      select: { callKey: true },
      orderBy: { callKey: "asc" },
    });
    expect(keys.map((row) => row.callKey)).toEqual(["fixed:1", "fixed:2"]);
  });

  it("refuses a JSON-RPC batch of more than 16 messages whole: nothing proposed, nothing recorded", async () => {
    const own = await createWorld({ rateConversationPerMin: 2 });
    const conversation = await agentConversation(own);
    const read = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "get_order", arguments: { order_id: own.orders.o1001 } },
    });
    const auth = { authorization: `Bearer ${own.keys.agent}` };
    const response = await post(
      conversation,
      auth,
      Array.from({ length: 17 }, (_, index) => read(index + 1)),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: -32600, message: expect.stringContaining("16") } });
    expect(await db.toolCall.count({ where: { conversationId: conversation } })).toBe(0);
    expect(await db.decisionLog.count({ where: { conversationId: conversation } })).toBe(0);
    // Sixteen are a batch like any other: each call counted, the ones past the limit refused and recorded.
    const answers = (await (
      await post(
        conversation,
        auth,
        Array.from({ length: 16 }, (_, index) => read(index + 1)),
      )
    ).json()) as { result: { structuredContent: { status: string } } }[];
    expect(answers.filter((answer) => answer.result.structuredContent.status === "ok")).toHaveLength(2);
    expect(await db.toolCall.count({ where: { conversationId: conversation } })).toBe(16);
  });
});

describe("an MCP client that sends nothing but its API key", () => {
  it("writes, retries safely, is held without an error, follows the held call and hears why it was denied", async () => {
    const own = await createWorld();
    const conversation = await agentConversation(own);
    const client = await connectMcp(MCP_BASE, own.keys.agent, conversation, routeFetch);
    const { tools } = await client.listTools();
    for (const tool of tools)
      expect(tool.outputSchema).toMatchObject({ type: "object", required: ["status", "call_id"] });

    const first = await client.callTool({ name: "issue_refund", arguments: refundArguments(own.orders.o1001, 1500) });
    expect(first.isError).toBe(false);
    expect(first.structuredContent).toMatchObject({ status: "ok", result: { amount_cents: 1500 } });
    const retry = await client.callTool({ name: "issue_refund", arguments: refundArguments(own.orders.o1001, 1500) });
    expect(retry.structuredContent).toEqual({ ...(first.structuredContent as object), replayed: true });
    expect((await db.order.findUniqueOrThrow({ where: { id: own.orders.o1001 } })).refundedCents).toBe(1500);

    const held = await client.callTool({ name: "issue_refund", arguments: refundArguments(own.orders.o1004, 8000) });
    const callId = expectHeldResult(held);
    const waiting = await client.callTool({ name: "get_call_status", arguments: { call_id: callId } });
    expect(waiting.structuredContent).toMatchObject({
      status: "ok",
      result: { call_id: callId, status: "needs_approval" },
    });

    const request = await db.approvalRequest.findFirstOrThrow({ where: { originCallId: callId } });
    await denyRequest(
      { userId: own.users.supervisor, tenantId: own.tenantId, role: "SUPERVISOR" },
      request.id,
      "Refund exceeds what we owe.",
    );
    const decided = await client.callTool({ name: "get_call_status", arguments: { call_id: callId } });
    expect(decided.structuredContent).toMatchObject({
      status: "ok",
      result: { call_id: callId, status: "not_allowed", reason: "Refund exceeds what we owe." },
    });
    expect(await db.refund.count({ where: { orderId: own.orders.o1004 } })).toBe(0);
    await client.close();
  });

  it("waits for a held call with get_call_status's wait_seconds and hears the decision the moment it is made", async () => {
    const own = await createWorld();
    const conversation = await agentConversation(own);
    const client = await connectMcp(MCP_BASE, own.keys.agent, conversation, routeFetch);
    await client.listTools();
    const held = await client.callTool({ name: "issue_refund", arguments: refundArguments(own.orders.o1004, 8000) });
    const { call_id: callId } = held.structuredContent as { call_id: string };

    // Nothing decides: the wait ends when asked, with the call still waiting.
    let started = Date.now();
    const still = await client.callTool({ name: "get_call_status", arguments: { call_id: callId, wait_seconds: 1 } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(still.structuredContent).toMatchObject({ result: { call_id: callId, status: "needs_approval" } });

    const waiting = client
      .callTool({ name: "get_call_status", arguments: { call_id: callId, wait_seconds: 20 } })
      .then((result) => ({ result, at: Date.now() }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const request = await db.approvalRequest.findFirstOrThrow({ where: { originCallId: callId } });
    await denyRequest(
      { userId: own.users.supervisor, tenantId: own.tenantId, role: "SUPERVISOR" },
      request.id,
      "Refund exceeds what we owe.",
    );
    const decidedAt = Date.now();
    const { result, at } = await waiting;
    expect(at - decidedAt).toBeLessThan(1000);
    expect(result.structuredContent).toMatchObject({
      status: "ok",
      result: { call_id: callId, status: "not_allowed", reason: "Refund exceeds what we owe." },
    });

    // A decided call answers at once, and a wait the schema does not allow is refused before any waiting.
    started = Date.now();
    await client.callTool({ name: "get_call_status", arguments: { call_id: callId, wait_seconds: 30 } });
    expect(Date.now() - started).toBeLessThan(1000);
    const tooLong = await client.callTool({
      name: "get_call_status",
      arguments: { call_id: callId, wait_seconds: 31 },
    });
    expect(tooLong.structuredContent).toMatchObject({ status: "invalid_arguments", paths: ["wait_seconds"] });
    await client.close();
  });
});
