import { readFileSync } from "node:fs";
import createClient from "openapi-fetch";
import { describe, expect, it } from "vitest";
import { GET as openApiRoute } from "@/app/api/openapi.json/route";
import { approveRequest } from "@/lib/approvals/decision/approve";
import {
  AuthorizationServerMetadataSchema,
  BatchOutcomeSchema,
  CallOutcomeSchema,
  ClientRegistrationSchema,
  ConversationSchema,
  ProtectedResourceMetadataSchema,
  RpcErrorSchema,
  ToolListSchema,
} from "@/lib/openapi/schemas";
import { apiTypes, TYPES_FILE } from "@/scripts/openapi-types";
import { newCallKey } from "../support/api";
import { routedFetch } from "../support/app-routes";
import { supervisorOf } from "../support/calls";
import { refundedOf } from "../support/effects";
import { createWorld } from "../support/world";
import type { paths } from "./toolgate-api";

// A client generated from GET /api/openapi.json (openapi-typescript's types, openapi-fetch's client) drives the real
// route handlers: what a developer who generates a client from the document gets.

const BASE = "http://localhost:3000";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An answer's body as the document's schema reads it: equal to the body, so no field goes undocumented. */
const asDocumented = <T>(schema: { parse(value: unknown): T }, body: unknown): T => {
  const parsed = schema.parse(body);
  expect(parsed).toEqual(body);
  return parsed;
};

describe("a client generated from the OpenAPI document", () => {
  it("is typed by the served document: tests/openapi/toolgate-api.d.ts is what openapi-typescript makes of it", async () => {
    const document: object = await (await openApiRoute(new Request(`${BASE}/api/openapi.json`))).json();
    expect(await apiTypes(document), "stale types: run npm run openapi:types").toBe(readFileSync(TYPES_FILE, "utf8"));
  });

  it("opens a conversation, proposes a refund, waits for the supervisor's approval and reads the executed call", async () => {
    const world = await createWorld();
    const order = world.orders.o1004;
    const client = createClient<paths>({
      baseUrl: BASE,
      fetch: routedFetch(),
      headers: { Authorization: `Bearer ${world.keys.agent}` },
    });

    const opened = await client.POST("/api/v1/conversations", { body: { customer_id: world.customers.ana } });
    expect(opened.response.status).toBe(201);
    const conversation = asDocumented(ConversationSchema, opened.data);
    expect(conversation.tools).toContain("issue_refund");

    const proposed = await client.POST("/api/v1/conversations/{id}/tool-calls", {
      params: { path: { id: conversation.id }, header: { "Idempotency-Key": newCallKey() } },
      body: {
        name: "issue_refund",
        arguments: { order_id: order, amount_cents: 8000, currency: "USD", reason: "damaged" },
      },
    });
    expect(proposed.response.status).toBe(200);
    const held = asDocumented(CallOutcomeSchema, proposed.data);
    expect(held).toMatchObject({
      kind: "pending_approval",
      code: "approval.required",
      model: { status: "needs_approval" },
    });
    expect(await refundedOf(order)).toBe(0);

    const waiting = client.GET("/api/v1/tool-calls/{id}", { params: { path: { id: held.id }, query: { wait: 20 } } });
    await sleep(500);
    expect((await approveRequest(supervisorOf(world), held.approval!.id)).ok).toBe(true);
    const waited = await waiting;
    expect(waited.response.status).toBe(200);
    expect(asDocumented(CallOutcomeSchema, waited.data)).toMatchObject({
      id: held.id,
      kind: "executed",
      code: "refund.issued",
      result: { amount_cents: 8000 },
    });

    const read = await client.GET("/api/v1/tool-calls/{id}", { params: { path: { id: held.id } } });
    expect(read.data).toEqual(waited.data);
    expect(await refundedOf(order)).toBe(8000);
  });

  it("reads the documented error of a wait out of range, with no call looked up", async () => {
    const world = await createWorld();
    const client = createClient<paths>({
      baseUrl: BASE,
      fetch: routedFetch(),
      headers: { Authorization: `Bearer ${world.keys.agent}` },
    });
    const answer = await client.GET("/api/v1/tool-calls/{id}", {
      params: { path: { id: "call_missing" }, query: { wait: 61 } },
    });
    expect(answer.response.status).toBe(400);
    expect(answer.error).toEqual({ error: { code: "wait.invalid", message: expect.any(String) } });
  });

  it("reads the OAuth discovery documents, registers a client and is refused a token, each as documented", async () => {
    const client = createClient<paths>({ baseUrl: BASE, fetch: routedFetch() });
    const server = await client.GET("/.well-known/oauth-authorization-server");
    const metadata = asDocumented(AuthorizationServerMetadataSchema, server.data);
    expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
    for (const path of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/api/mcp",
    ] as const) {
      const resource = asDocumented(ProtectedResourceMetadataSchema, (await client.GET(path)).data);
      expect(resource.authorization_servers).toEqual([metadata.issuer]);
    }

    const registered = await client.POST("/api/oauth/register", {
      headers: { "x-forwarded-for": `203.0.113.${Math.floor(Math.random() * 250) + 1}` },
      body: { client_name: "Generated client", redirect_uris: ["http://127.0.0.1:8123/callback"] },
    });
    expect(registered.response.status).toBe(201);
    const { client_id } = asDocumented(ClientRegistrationSchema, registered.data);

    const refused = await client.POST("/api/oauth/token", {
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: { grant_type: "refresh_token", client_id, refresh_token: "not-a-refresh-token" },
    });
    expect(refused.response.status).toBe(400);
    expect(refused.error).toEqual({ error: "invalid_grant", error_description: expect.any(String) });
  });

  it("lists a conversation's tools for OpenAI and proposes an OpenAI batch with them, as documented", async () => {
    const world = await createWorld();
    const client = createClient<paths>({
      baseUrl: BASE,
      fetch: routedFetch(),
      headers: { Authorization: `Bearer ${world.keys.agent}` },
    });
    const opened = await client.POST("/api/v1/conversations", { body: { customer_id: world.customers.ana } });
    const listed = await client.GET("/api/v1/conversations/{id}/tools", {
      params: { path: { id: opened.data!.id }, query: { format: "openai" } },
    });
    expect(asDocumented(ToolListSchema, listed.data).tools).toContainEqual(
      expect.objectContaining({ type: "function", function: expect.objectContaining({ name: "issue_refund" }) }),
    );

    const batch = await client.POST("/api/v1/conversations/{id}/tool-calls", {
      params: { path: { id: opened.data!.id }, query: { format: "openai-chat" } },
      body: {
        tool_calls: [
          {
            id: "call_a",
            type: "function",
            function: { name: "get_order", arguments: `{"order_id":"${world.orders.o1001}"}` },
          },
        ],
      },
    });
    expect(batch.response.status).toBe(200);
    expect(asDocumented(BatchOutcomeSchema, batch.data)).toMatchObject({
      format: "openai-chat",
      results: [{ ref: "call_a", kind: "executed", code: "order.read" }],
    });
  });

  it("asks for a key at the MCP endpoint as documented, then lists the conversation's tools over JSON-RPC", async () => {
    const world = await createWorld();
    const client = createClient<paths>({ baseUrl: BASE, fetch: routedFetch(), headers: { host: "localhost:3000" } });
    const list = { jsonrpc: "2.0" as const, id: 1, method: "tools/list", params: {} };
    const accept = "application/json, text/event-stream";

    const signedOut = await client.POST("/api/mcp", { headers: { accept }, body: list });
    expect(signedOut.response.status).toBe(401);
    expect(signedOut.error).toEqual({ error: { code: "auth.required", message: expect.any(String) } });
    expect(signedOut.response.headers.get("www-authenticate")).toContain("resource_metadata=");

    const foreign = await client.POST("/api/mcp", { headers: { accept, host: "attacker.example" }, body: list });
    expect(foreign.response.status).toBe(403);
    asDocumented(RpcErrorSchema, foreign.error);

    const opened = await client.POST("/api/v1/conversations", {
      headers: { Authorization: `Bearer ${world.keys.agent}` },
      body: { customer_id: world.customers.ana },
    });
    const listed = await client.POST("/api/mcp", {
      params: { query: { conversation: opened.data!.id }, header: { "MCP-Protocol-Version": "2025-11-25" } },
      headers: { accept, Authorization: `Bearer ${world.keys.agent}` },
      body: list,
    });
    expect(listed.response.status).toBe(200);
    expect(listed.data).toMatchObject({ jsonrpc: "2.0", id: 1, result: { tools: expect.any(Array) } });
  });
});
