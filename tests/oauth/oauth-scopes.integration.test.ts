import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { conversationFor } from "../support/api";
import { agentConversation, refundArguments } from "../support/calls";
import { MemoryProvider, oauthRouteFetch } from "../support/oauth";
import {
  agentSession,
  CIMD_URL,
  connect,
  consent,
  ISSUER,
  mcpRequest,
  REDIRECT,
  RESOURCE,
} from "../support/oauth-grant";
import { signedIn } from "../support/signed-in";
import { createWorld } from "../support/world";

// Scopes the MCP authorization spec's way (2025-11-25, issue 34): the 401 names the scopes to ask for, and a tool
// outside the token's scopes, which the person could grant, answers 403 insufficient_scope so the client steps up.

vi.mock("@/lib/auth/sign-in/auth", async () => (await import("../support/signed-in")).signedInMock());
vi.mock("@/lib/oauth/clients/fetch-document", async () => (await import("../support/cimd-fetcher")).cimdFetcherMock());

beforeAll(() => {
  process.env.NEXTAUTH_SECRET = "oauth-tests-signing-secret";
});

const METADATA = `${ISSUER}/.well-known/oauth-protected-resource/api/mcp`;
const callTool = (name: string, args: unknown) => ({
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params: { name, arguments: args },
});

describe("scope challenges on /api/mcp", () => {
  it("a request without a token is told which scopes to ask for", async () => {
    const answer = await oauthRouteFetch(`${RESOURCE}?conversation=conv_missing`, { method: "POST", body: "{}" });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${METADATA}", scope="orders:read orders:write email:send refunds:write"`,
    );
  });

  it("a tool outside the token's scopes is 403 insufficient_scope with the scopes to ask for, and nothing is proposed", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w);
    signedIn.user = agentSession(w);
    const tokens = await connect(["orders:read"]);
    const refused = await mcpRequest(
      conversation,
      tokens.access_token,
      callTool("issue_refund", refundArguments(w.orders.o1004, 8000)),
    );
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", scope="orders:read refunds:write", resource_metadata="${METADATA}", error_description="issue_refund needs refunds:write"`,
    );
    expect(await refused.json()).toMatchObject({ error: { code: "auth.insufficient-scope" } });
    expect(await db.toolCall.count({ where: { conversationId: conversation } })).toBe(0);
    expect(await db.approvalRequest.count({ where: { tenantId: w.tenantId } })).toBe(0);
    // In a batch too, and a tool inside the scopes still answers.
    const batch = await mcpRequest(conversation, tokens.access_token, [
      callTool("get_order", { order_id: w.orders.o1004 }),
      { ...callTool("send_status_email", { order_id: w.orders.o1004 }), id: 8 },
    ]);
    expect(batch.status).toBe(403);
    expect(batch.headers.get("www-authenticate")).toContain('scope="orders:read email:send"');
    const read = await mcpRequest(
      conversation,
      tokens.access_token,
      callTool("get_order", { order_id: w.orders.o1004 }),
    );
    expect(read.status).toBe(200);
    // The connection is unharmed.
    const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: w.tenantId } });
    expect(grant.revokedAt).toBeNull();
  });

  it("a scope the agent does not hold is no challenge: the gateway answers not_allowed", async () => {
    const w = await createWorld();
    const conversation = await conversationFor(w.keys.agent2, { customer_id: w.customers.ana });
    signedIn.user = agentSession(w, w.users.agent2);
    const tokens = await connect(["orders:read"]);
    const answer = await mcpRequest(
      conversation,
      tokens.access_token,
      callTool("issue_refund", refundArguments(w.orders.o1004, 8000)),
    );
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { result: { structuredContent: { status: string } } };
    expect(body.result.structuredContent.status).toBe("not_allowed");
  });

  it("the MCP SDK client steps up: the 403 sends the person to consent to the missing scope, and the call then goes through", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w);
    signedIn.user = agentSession(w);
    const tokens = await connect(["orders:read"]);
    const provider = new MemoryProvider(REDIRECT, CIMD_URL);
    // Only the access token: SDK 1.32.2 answers a 403 with a refresh when it holds a refresh token, which cannot
    // widen a grant (RFC 6749 §6), and then gives up; without one it goes to the authorization endpoint as the spec says.
    provider.saved = { access_token: tokens.access_token, token_type: "Bearer" };
    const transport = () =>
      new StreamableHTTPClientTransport(new URL(`/api/mcp?conversation=${conversation}`, ISSUER), {
        authProvider: provider,
        fetch: oauthRouteFetch,
      });
    const client = new Client({ name: "step-up", version: "1" });
    await client.connect(transport());
    const failure = await client
      .callTool({ name: "issue_refund", arguments: refundArguments(w.orders.o1004, 8000) })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UnauthorizedError);
    const asked = provider.authorizationUrl!;
    expect(asked.searchParams.get("scope")).toBe("orders:read refunds:write");
    const answer = await consent(["orders:read", "refunds:write"], {
      code_challenge: asked.searchParams.get("code_challenge")!,
      state: asked.searchParams.get("state")!,
    });
    expect(answer.status).toBe(303);
    await transport().finishAuth(new URL(answer.headers.get("location")!).searchParams.get("code")!);
    const again = new Client({ name: "step-up", version: "1" });
    await again.connect(transport());
    const held = await again.callTool({ name: "issue_refund", arguments: refundArguments(w.orders.o1004, 8000) });
    expect(held.structuredContent).toMatchObject({ status: "needs_approval" });
    await client.close();
    await again.close();
  });
});
