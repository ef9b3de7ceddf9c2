import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db } from "@/lib/db";
import type { DocumentFetcher } from "@/lib/oauth/clients";
import { agentConversation, refundArguments } from "../support/calls";
import { listToolsWith, MemoryProvider, oauthRouteFetch } from "../support/oauth";
import {
  agentSession,
  CIMD_URL,
  cimdDocument,
  consent,
  ISSUER,
  REDIRECT,
  tokenEndpoint,
  VERIFIER,
} from "../support/oauth-grant";
import { signedIn } from "../support/signed-in";
import { createWorld } from "../support/world";

// The URL a person pastes is the resource (issue 34): VS Code requires the protected resource metadata's `resource`
// to equal the server URL exactly, so a conversation has a URL of its own, /api/mcp/c/<id>, with its own metadata;
// the old ?conversation= form keeps working for the clients configured with it.

vi.mock("@/lib/auth/auth", async () => (await import("../support/signed-in")).signedInMock());
vi.mock("@/lib/oauth/fetch-document", () => ({
  fetchMetadataDocument: (async () => ({
    ok: true,
    status: 200,
    contentType: "application/json",
    body: cimdDocument(),
  })) as DocumentFetcher,
}));

beforeAll(() => {
  process.env.NEXTAUTH_SECRET = "oauth-tests-signing-secret";
});

describe("a conversation's own URL", () => {
  it("its 401 and its metadata name exactly that URL as the resource", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w);
    const url = `${ISSUER}/api/mcp/c/${conversation}`;
    const challenge = await oauthRouteFetch(url, { method: "POST", body: "{}" });
    expect(challenge.status).toBe(401);
    const metadataUrl = `${ISSUER}/.well-known/oauth-protected-resource/api/mcp/c/${conversation}`;
    expect(challenge.headers.get("www-authenticate")).toContain(`resource_metadata="${metadataUrl}"`);
    const metadata = await oauthRouteFetch(metadataUrl);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: url, authorization_servers: [ISSUER] });
    for (const other of ["api/mcp/c/not%20an%20id", "api/mcp/x/conv_abcdefgh", "api/v1/conversations"]) {
      const refused = await oauthRouteFetch(`${ISSUER}/.well-known/oauth-protected-resource/${other}`);
      expect([other, refused.status]).toEqual([other, 404]);
    }
  });

  it("the MCP SDK client given that URL authorizes for it as its resource, calls tools, and its held refund is approved and read back", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w);
    signedIn.user = agentSession(w);
    const url = new URL(`/api/mcp/c/${conversation}`, ISSUER);
    const provider = new MemoryProvider(REDIRECT, CIMD_URL);
    const transport = () => new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: oauthRouteFetch });
    const refused = await new Client({ name: "vs-code-like", version: "1" })
      .connect(transport())
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UnauthorizedError);
    const asked = provider.authorizationUrl!;
    expect(asked.searchParams.get("resource")).toBe(url.href);
    const answer = await consent(["orders:read", "refunds:write"], {
      code_challenge: asked.searchParams.get("code_challenge")!,
      state: asked.searchParams.get("state")!,
      resource: url.href,
    });
    expect(answer.status).toBe(303);
    await transport().finishAuth(new URL(answer.headers.get("location")!).searchParams.get("code")!);
    const client = new Client({ name: "vs-code-like", version: "1" });
    await client.connect(transport());
    const held = await client.callTool({ name: "issue_refund", arguments: refundArguments(w.orders.o1004, 8000) });
    const { call_id: callId, status } = held.structuredContent as { call_id: string; status: string };
    expect(status).toBe("needs_approval");
    const request = await db.approvalRequest.findFirstOrThrow({ where: { originCallId: callId } });
    const supervisor = { userId: w.users.supervisor, tenantId: w.tenantId, role: "SUPERVISOR" as const };
    expect((await approveRequest(supervisor, request.id)).ok).toBe(true);
    const read = await client.callTool({ name: "get_call_status", arguments: { call_id: callId } });
    expect(read.structuredContent).toMatchObject({ result: { status: "ok" } });
    expect(await db.toolCall.count({ where: { conversationId: conversation } })).toBe(2);
    // The same token reaches the agent's conversation by the old address too.
    const token = provider.saved!.access_token;
    expect((await listToolsWith(oauthRouteFetch, ISSUER, conversation, token)).status).toBe(200);
    await client.close();
  });

  it("a resource outside this endpoint is invalid_target at the authorization and token endpoints", async () => {
    const w = await createWorld();
    signedIn.user = agentSession(w);
    for (const resource of [
      `${ISSUER}/api/mcp/c/../v1`,
      `${ISSUER}/api/mcpx`,
      "https://other.example/api/mcp/c/conv_a",
    ]) {
      const answer = await consent(["orders:read"], { resource });
      expect(answer.status).toBe(303);
      expect(new URL(answer.headers.get("location")!).searchParams.get("error")).toBe("invalid_target");
      const token = await tokenEndpoint({
        grant_type: "authorization_code",
        code: "unused",
        client_id: CIMD_URL,
        redirect_uri: REDIRECT,
        code_verifier: VERIFIER,
        resource,
      });
      expect(((await token.json()) as { error: string }).error).toBe("invalid_target");
    }
    expect(await db.oAuthGrant.count({ where: { tenantId: w.tenantId } })).toBe(0);
  });
});
