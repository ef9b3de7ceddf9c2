import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { revokeAgentKey } from "@/lib/admin/access/agent-keys";
import { approveRequest } from "@/lib/approvals/decision/approve";
import type { Approver } from "@/lib/approvals/decision/types";
import { createApiKey } from "@/lib/auth/keys/api-keys";
import { db } from "@/lib/db";
import { conversationFor } from "../../support/api";
import { expectNoEffect } from "../../support/effects";
import { ownExternals } from "../../support/externals";
import { createWorld, type World } from "../../support/world";
import { MCP_BASE, routeFetch } from "../../support/mcp-route";
import { DEFAULT_TOOL_NAMES } from "../../support/mcp-client";

// Protocol revision 2026-07-28 beside 2025-11-25 on /api/mcp (decision 020), through the real route handler:
// the v2 SDK client pinned to the new revision, raw requests for what a client must not send, and the tasks
// extension for a refund held for a supervisor.

const externals = ownExternals();
const VERSION = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";

const endpoint = (conversation: string) =>
  new URL(`/api/mcp?conversation=${encodeURIComponent(conversation)}`, MCP_BASE);

/** The v2 SDK client speaking only 2026-07-28 (no initialize), declaring the tasks extension when asked. */
async function modernClient(key: string, conversation: string, tasks = false): Promise<Client> {
  const client = new Client(
    { name: "toolgate-modern-runtime", version: "1.0.0" },
    {
      versionNegotiation: { mode: { pin: VERSION } },
      capabilities: tasks ? { extensions: { [TASKS]: {} } } : {},
    },
  );
  await client.connect(
    new StreamableHTTPClientTransport(endpoint(conversation), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: routeFetch,
    }),
  );
  return client;
}

/** A JSON-RPC POST to the conversation's MCP endpoint with the agent's key, as a Streamable HTTP client sends it. */
const postMcp = (key: string, conversation: string, body: unknown, headers: Record<string, string> = {}) =>
  routeFetch(endpoint(conversation), {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });

/** One raw 2026-07-28 request; `headers` and `meta` override what a conforming client would send. */
async function raw(
  key: string,
  conversation: string,
  method: string,
  params: Record<string, unknown>,
  options: { headers?: Record<string, string>; meta?: Record<string, unknown>; omitName?: boolean } = {},
) {
  const name = options.omitName ? undefined : ((params.name ?? params.taskId) as string | undefined);
  const response = await postMcp(
    key,
    conversation,
    {
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": VERSION,
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
          ...options.meta,
        },
      },
    },
    {
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
      ...(name ? { "mcp-name": name } : {}),
      ...options.headers,
    },
  );
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const supervisor = (world: World): Approver => ({
  userId: world.users.supervisor,
  tenantId: world.tenantId,
  role: "SUPERVISOR",
});
const refund = (order: string, amount: number) => ({
  order_id: order,
  amount_cents: amount,
  currency: "USD",
  reason: "damaged",
});

/** A conversation of a fresh world, and how many calls it has recorded. */
async function setup() {
  const world = await createWorld();
  const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
  const calls = () => db.toolCall.count({ where: { conversationId: conversation } });
  return { world, conversation, calls, key: world.keys.agent };
}

const withTasks = { "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } } };

describe("protocol revision 2026-07-28 on /api/mcp", () => {
  it("answers server/discover, tools/list and tools/call to the v2 SDK client without an initialize", async () => {
    const { world, conversation, key } = await setup();
    const client = await modernClient(key, conversation);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(DEFAULT_TOOL_NAMES);
    const result = await client.callTool({ name: "get_order", arguments: { order_id: world.orders.o1004 } });
    expect(result).toMatchObject({ isError: false, structuredContent: { status: "ok" } });
    await client.close();

    const discovered = await raw(key, conversation, "server/discover", {});
    expect(discovered.status).toBe(200);
    expect(discovered.body.result).toMatchObject({
      resultType: "complete",
      supportedVersions: [VERSION],
      capabilities: { tools: {}, extensions: { [TASKS]: {} } },
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "toolgate" } },
    });
    expect(discovered.body.result.capabilities.tasks).toBeUndefined();
  });

  it("answers a misspelled tool with -32602 naming the conversation's tool it meant", async () => {
    const { conversation, calls, key } = await setup();
    const client = await modernClient(key, conversation);
    const failure = await client.callTool({ name: "issue-refund", arguments: {} }).catch((error: Error) => error);
    await client.close();
    expect(failure).toMatchObject({ code: -32602, message: expect.stringMatching(/did you mean issue_refund\?$/) });
    expect(await calls()).toBe(1);
  });

  it("still serves a 2025-11-25 client on the same address (initialize, then its session-less requests)", async () => {
    const { conversation, key } = await setup();
    const response = await postMcp(key, conversation, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "old", version: "1" } },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(
      "2025-11-25",
    );
  });
});

describe("hostile 2026-07-28 requests get a clear 400 and change nothing", () => {
  it("refuses Mcp-Method or Mcp-Name headers that disagree with the body, and a tools/call without Mcp-Name", async () => {
    const { world, conversation, calls, key } = await setup();
    const args = { name: "issue_refund", arguments: refund(world.orders.o1004, 500) };
    await expectNoEffect(world, async () => {
      const method = await raw(key, conversation, "tools/call", args, { headers: { "mcp-method": "tools/list" } });
      expect(method.status).toBe(400);
      expect(method.body.error).toMatchObject({ code: -32020, message: expect.stringMatching(/Mcp-Method/) });
      const name = await raw(key, conversation, "tools/call", args, { headers: { "mcp-name": "get_order" } });
      expect(name.status).toBe(400);
      expect(name.body.error).toMatchObject({ code: -32020, message: expect.stringMatching(/Mcp-Name/) });
      const unnamed = await raw(key, conversation, "tools/call", args, { omitName: true });
      expect(unnamed.status).toBe(400);
      expect(unnamed.body.error).toMatchObject({ code: -32020, message: expect.stringMatching(/Mcp-Name/) });
    });
    expect(await calls()).toBe(0);
  });

  it("answers an unknown protocol version with the versions it supports, a header naming another version as a mismatch, and an envelope without client info or capabilities as invalid", async () => {
    const { world, conversation, calls, key } = await setup();
    const args = { name: "issue_refund", arguments: refund(world.orders.o1004, 500) };
    const unknown = await raw(key, conversation, "tools/call", args, {
      headers: { "mcp-protocol-version": "1900-01-01" },
      meta: { "io.modelcontextprotocol/protocolVersion": "1900-01-01" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      code: -32022,
      data: { supported: expect.arrayContaining([VERSION]), requested: "1900-01-01" },
    });
    const split = await raw(key, conversation, "tools/call", args, {
      headers: { "mcp-protocol-version": "2025-11-25" },
    });
    expect(split.status).toBe(400);
    expect(split.body.error.code).toBe(-32020);
    const bare = await raw(key, conversation, "tools/call", args, {
      meta: {
        "io.modelcontextprotocol/clientInfo": undefined,
        "io.modelcontextprotocol/clientCapabilities": undefined,
      },
    });
    expect(bare.status).toBe(400);
    expect(bare.body.error.code).toBe(-32602);
    expect(await calls()).toBe(0);
  });

  it("refuses an oversized body before it is parsed, and a 2025-era request whose Mcp-Method header disagrees", async () => {
    const { world, conversation, calls, key } = await setup();
    const oversized = await raw(key, conversation, "tools/call", {
      name: "issue_refund",
      arguments: { ...refund(world.orders.o1004, 500), reason: "x".repeat(20_000) },
    });
    expect(oversized.status).toBe(400);
    expect(oversized.body.error.message).toBe("parse.too-large");
    const response = await postMcp(
      key,
      conversation,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "issue_refund", arguments: refund(world.orders.o1004, 500) },
      },
      { "mcp-protocol-version": "2025-11-25", "mcp-method": "tools/list" },
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number; message: string } }).error).toMatchObject({
      code: -32020,
      message: expect.stringMatching(/Mcp-Method header value 'tools\/list'/),
    });
    expect(await calls()).toBe(0);
  });
});

/** A refund above the automatic limit, called by a client that declared the tasks extension. */
const heldRefundAsTask = (world: World, key: string, conversation: string) =>
  raw(
    key,
    conversation,
    "tools/call",
    { name: "issue_refund", arguments: refund(world.orders.o1004, 8000) },
    { meta: withTasks },
  );

describe("a key revoked while a request of it waits", () => {
  it("a get_call_status wait that runs out gets the route's 401, and nothing of the call", async () => {
    const { world, conversation } = await setup();
    const { id, key } = await createApiKey(db, { id: world.users.agent, tenantId: world.tenantId });
    const held = await raw(key, conversation, "tools/call", {
      name: "issue_refund",
      arguments: refund(world.orders.o1004, 8000),
    });
    const callId = held.body.result.structuredContent.call_id as string;
    const read = { name: "get_call_status", arguments: { call_id: callId, wait_seconds: 2 } };
    const waiting = raw(key, conversation, "tools/call", read);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await revokeAgentKey({ id: world.users.admin, tenantId: world.tenantId }, id)).toBe(true);
    const answer = await waiting;
    // Word for word what the route answers a request with the revoked key.
    expect(answer).toEqual(await raw(key, conversation, "tools/call", read));
    expect(answer).toMatchObject({ status: 401, body: { error: { code: "auth.invalid-token" } } });
    expect(JSON.stringify(answer.body)).not.toContain(callId);
  });
});

describe("the tasks extension (io.modelcontextprotocol/tasks)", () => {
  it("answers a held refund with a task to a client that declared it; the task completes with the call's result once approved", async () => {
    const { world, conversation, key } = await setup();
    const created = await heldRefundAsTask(world, key, conversation);
    expect(created.status).toBe(200);
    const task = created.body.result;
    expect(task).toMatchObject({
      resultType: "task",
      taskId: expect.stringMatching(/^task_/),
      status: "working",
      ttlMs: null,
      pollIntervalMs: 5000,
    });
    expect(task.ttl).toBeUndefined();
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);

    const working = await raw(key, conversation, "tasks/get", { taskId: task.taskId }, { meta: withTasks });
    expect(working.body.result).toMatchObject({ resultType: "complete", taskId: task.taskId, status: "working" });
    expect(working.body.result.result).toBeUndefined();

    const request = await db.approvalRequest.findFirstOrThrow({ where: { conversationId: conversation } });
    expect((await approveRequest(supervisor(world), request.id)).ok).toBe(true);
    const done = await raw(key, conversation, "tasks/get", { taskId: task.taskId }, { meta: withTasks });
    expect(done.body.result).toMatchObject({
      status: "completed",
      result: { isError: false, structuredContent: { status: "ok", result: { amount_cents: 8000 } } },
    });
    expect((await externals.stats()).totalsByOrder[world.orders.o1004]).toBe(8000);
  });

  it("never returns a task to a client that did not declare the extension, and refuses it the tasks methods", async () => {
    const { world, conversation, key } = await setup();
    const held = await raw(key, conversation, "tools/call", {
      name: "issue_refund",
      arguments: refund(world.orders.o1004, 8000),
    });
    expect(held.body.result).toMatchObject({
      resultType: "complete",
      isError: false,
      structuredContent: { status: "needs_approval" },
    });
    const refused = await raw(key, conversation, "tasks/get", { taskId: "task_unknown" });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
    const removed = await raw(key, conversation, "tasks/result", { taskId: "task_unknown" }, { meta: withTasks });
    expect(removed.body.error.code).toBe(-32601);
  });

  it("tasks/cancel withdraws the held call's approval request; another conversation cannot see the task", async () => {
    const { world, conversation, key } = await setup();
    const created = await heldRefundAsTask(world, key, conversation);
    const { taskId } = created.body.result as { taskId: string };
    const other = await conversationFor(key, { customer_id: world.customers.ana });
    const foreign = await raw(key, other, "tasks/get", { taskId }, { meta: withTasks });
    expect(foreign.body.error).toMatchObject({ code: -32602, message: "Failed to retrieve task: Task not found" });

    const updated = await raw(key, conversation, "tasks/update", { taskId, inputResponses: {} }, { meta: withTasks });
    expect(updated.body.result).toMatchObject({ resultType: "complete" });
    const cancelled = await raw(key, conversation, "tasks/cancel", { taskId }, { meta: withTasks });
    expect(cancelled.body.result).toMatchObject({ resultType: "complete" });
    expect((await db.approvalRequest.findFirstOrThrow({ where: { conversationId: conversation } })).status).toBe(
      "withdrawn",
    );
    const after = await raw(key, conversation, "tasks/get", { taskId }, { meta: withTasks });
    expect(after.body.result).toMatchObject({ status: "cancelled" });
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);
  });
});
