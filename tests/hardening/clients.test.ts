import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  Agent,
  MCPServerStreamableHttp,
  run,
  setTracingDisabled,
  Usage,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents";
import { beforeAll, describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { denyRequest } from "@/lib/approvals/decision/deny";
import type { Approver } from "@/lib/approvals/decision/types";
import { db } from "@/lib/db";
import { conversationOver } from "../support/api-over-http";
import { refundArguments } from "../support/calls";
import { refundedOf } from "../support/effects";
import { ownProvider } from "../support/externals";
import { connectMcp, DEFAULT_TOOL_NAMES, expectHeldResult } from "../support/mcp-client";
import { ownInstances } from "../support/own-instances";
import { createWorld, type World } from "../support/world";

// Real MCP clients nobody here wrote, configured with nothing but the URL and one Authorization header, against the
// production build: the official SDK client, the OpenAI Agents SDK with a scripted model, LangChain's adapters and
// mcp-remote (how Claude Desktop reaches a remote server) over stdio.

const provider = ownProvider();
const [instance] = ownInstances(1, () => provider.env());
let world: World;

beforeAll(async () => {
  world = await createWorld();
});

const openConversation = (own: World = world) => conversationOver(instance.url, own.keys.agent, own.customers.ana);

const mcpUrl = (conversation: string) => `${instance.url}/api/mcp?conversation=${conversation}`;
const supervisor = (): Approver => ({ userId: world.users.supervisor, tenantId: world.tenantId, role: "SUPERVISOR" });

/** The approval request a held call made, once it exists. */
async function heldRequest(callId: string) {
  return db.approvalRequest.findFirstOrThrow({ where: { originCallId: callId, status: "pending" } });
}

describe("what a client without a key meets", () => {
  it("a JSON 401 pointing at the resource metadata, and JSON at every discovery path a client tries", async () => {
    const conversation = await openConversation();
    const unauthorized = await fetch(mcpUrl(conversation), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${instance.url}/.well-known/oauth-protected-resource/api/mcp", scope="orders:read orders:write email:send refunds:write"`,
    );
    expect(await unauthorized.json()).toMatchObject({ error: { code: "auth.required" } });
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/api/mcp"]) {
      const response = await fetch(`${instance.url}${path}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ resource: `${instance.url}/api/mcp` });
    }
    const metadata = await fetch(`${instance.url}/.well-known/oauth-authorization-server`);
    expect(await metadata.json()).toMatchObject({ issuer: instance.url, code_challenge_methods_supported: ["S256"] });
    for (const path of ["/.well-known/openid-configuration", "/api/mcp/.well-known/oauth-protected-resource"]) {
      const response = await fetch(`${instance.url}${path}`);
      expect([path, response.status, response.headers.get("content-type")]).toEqual([path, 404, "application/json"]);
      expect(await response.json()).toMatchObject({ error: { code: "not-found" } });
    }
  });
});

describe("the MCP SDK client with one fixed header", () => {
  it("writes, retries without a second effect, is held without an error, and waits for the decision", async () => {
    const own = await createWorld();
    const conversation = await openConversation(own);
    const client = await connectMcp(instance.url, own.keys.agent, conversation);

    const first = await client.callTool({ name: "issue_refund", arguments: refundArguments(own.orders.o1001, 1200) });
    const retry = await client.callTool({ name: "issue_refund", arguments: refundArguments(own.orders.o1001, 1200) });
    const second = await client.callTool({ name: "issue_refund", arguments: refundArguments(own.orders.o1001, 1300) });
    expect([first.isError, retry.isError, second.isError]).toEqual([false, false, false]);
    expect(retry.structuredContent).toEqual({ ...(first.structuredContent as object), replayed: true });
    expect(await refundedOf(own.orders.o1001)).toBe(2500);

    const held = await client.callTool({ name: "issue_refund", arguments: refundArguments(own.orders.o1004, 8000) });
    const callId = expectHeldResult(held);

    // The client waits over MCP itself: get_call_status answers the moment the supervisor decides.
    const waiting = client.callTool({ name: "get_call_status", arguments: { call_id: callId, wait_seconds: 30 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await denyRequest(
      { userId: own.users.supervisor, tenantId: own.tenantId, role: "SUPERVISOR" },
      (await heldRequest(callId)).id,
      "We already sent a replacement.",
    );
    expect((await waiting).structuredContent).toMatchObject({
      status: "ok",
      result: { status: "not_allowed", reason: "We already sent a replacement." },
    });
    expect(await refundedOf(own.orders.o1004)).toBe(0);
    await client.close();
  });
});

/** A model that plays its part from a script: refund, then (held) wait for the outcome through the tool, then answer. */
class ScriptedModel implements Model {
  seen: Record<string, unknown>[] = [];

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const items = (Array.isArray(request.input) ? request.input : []) as AgentInputItem[];
    const results = items.filter((item) => item.type === "function_call_result") as { name: string; output: unknown }[];
    const last = results.at(-1);
    const response = (output: ModelResponse["output"]): ModelResponse => ({ usage: new Usage(), output });
    const call = (name: string, args: unknown, id: string) =>
      response([{ type: "function_call", callId: id, name, arguments: JSON.stringify(args), status: "completed" }]);
    if (!last) return call("issue_refund", refundArguments(world.orders.o1004, 8000), "fc_refund");
    // The SDK hands a tool's output to the model as text, or as one or more text parts.
    const parts = (Array.isArray(last.output) ? last.output : [last.output]) as (string | { text: string })[];
    const text = parts.map((part) => (typeof part === "string" ? part : part.text)).join("");
    const shown = JSON.parse(text) as Record<string, any>;
    this.seen.push(shown);
    const held =
      shown.status === "needs_approval" ? shown : shown.result?.status === "needs_approval" ? shown.result : null;
    if (held) {
      // Held: the model waits for the supervisor through the tool, and asks again should the wait end first.
      return call("get_call_status", { call_id: held.call_id, wait_seconds: 30 }, `fc_status_${this.seen.length}`);
    }
    const outcome =
      shown.result?.status === "ok"
        ? `Refunded: ${shown.result.result.refunded_cents} cents in total.`
        : `Not refunded: ${shown.result?.reason ?? shown.status}`;
    return response([
      { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: outcome }] },
    ]);
  }

  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

describe("the OpenAI Agents SDK", () => {
  it("meets a held refund, waits for the supervisor, and continues with the decided outcome", async () => {
    setTracingDisabled(true);
    const conversation = await openConversation();
    const server = new MCPServerStreamableHttp({
      url: mcpUrl(conversation),
      name: "toolgate",
      requestInit: { headers: { authorization: `Bearer ${world.keys.agent}` } },
    });
    await server.connect();
    const model = new ScriptedModel();
    const agent = new Agent({ name: "support", instructions: "Help the customer.", model, mcpServers: [server] });
    const approving = (async () => {
      for (;;) {
        const request = await db.approvalRequest.findFirst({
          where: { conversationId: conversation, status: "pending" },
        });
        if (request) return approveRequest(supervisor(), request.id);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      const result = await run(agent, "My order ord_1004 arrived broken, please refund 80 dollars.");
      expect((await approving).ok).toBe(true);
      expect(model.seen[0]).toEqual({
        status: "needs_approval",
        call_id: expect.stringMatching(/^call_/),
        expires_at: expect.any(String),
        message: expect.stringContaining("read its outcome with get_call_status"),
      });
      expect(result.finalOutput).toBe("Refunded: 8000 cents in total.");
      expect(await refundedOf(world.orders.o1004)).toBe(8000);
      expect(await db.refund.count({ where: { orderId: world.orders.o1004, status: "issued" } })).toBe(1);
    } finally {
      await server.close();
    }
  });
});

describe("LangChain's MCP adapters", () => {
  it("load the tools and get a held call back as a result, not an exception", async () => {
    const own = await createWorld();
    const conversation = await openConversation(own);
    const client = new MultiServerMCPClient({
      mcpServers: {
        toolgate: {
          transport: "http",
          url: mcpUrl(conversation),
          headers: { authorization: `Bearer ${own.keys.agent}` },
        },
      },
      throwOnLoadError: true,
      useStandardContentBlocks: true,
    });
    try {
      const tools = await client.getTools();
      expect(tools.map((tool) => tool.name)).toEqual(DEFAULT_TOOL_NAMES);
      const refundTool = tools.find((tool) => tool.name === "issue_refund")!;
      const output = await refundTool.invoke(refundArguments(own.orders.o1004, 9000));
      const text = JSON.stringify(output);
      expect(text).toContain("needs_approval");
      expect(text).toMatch(/call_[A-Za-z0-9_-]+/);
    } finally {
      await client.close();
    }
  });
});

describe("mcp-remote over stdio", () => {
  it("proxies a stdio client to the server with one header: list, read, and a held refund", async () => {
    const own = await createWorld();
    const conversation = await openConversation(own);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        path.join("node_modules", "mcp-remote", "dist", "proxy.js"),
        mcpUrl(conversation),
        "--transport",
        "http-only",
        "--header",
        `Authorization:Bearer ${own.keys.agent}`,
      ],
      env: {
        ...(process.env as Record<string, string>),
        MCP_REMOTE_CONFIG_DIR: mkdtempSync(path.join(tmpdir(), "mcp-remote-")),
      },
      stderr: "ignore",
    });
    const client = new Client({ name: "stdio-host", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("get_call_status");
      const read = await client.callTool({ name: "get_order", arguments: { order_id: own.orders.o1001 } });
      expect(read.structuredContent).toMatchObject({ status: "ok", result: { order_id: own.orders.o1001 } });
      const held = await client.callTool({ name: "issue_refund", arguments: refundArguments(own.orders.o1004, 7000) });
      expect(held.isError).toBe(false);
      expect(held.structuredContent).toMatchObject({ status: "needs_approval" });
    } finally {
      await client.close();
    }
  });
});
