import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { POST as authorizeRoute } from "@/app/api/oauth/authorize/route";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db } from "@/lib/db";
import type { DocumentFetcher } from "@/lib/oauth/clients/clients";
import { conversationFor } from "../support/api";
import { MCP_BASE } from "../support/mcp-route";
import { MemoryProvider, oauthRouteFetch } from "../support/oauth";
import { agentSession, delegationProof } from "../support/oauth-grant";
import { signedIn } from "../support/signed-in";
import { createWorld } from "../support/world";

// MCP authorization with protocol revision 2026-07-28 (decision 020): the v2 SDK client, pinned to the new
// revision, runs its own OAuth flow against the route handlers in process (a client known by its metadata
// document, a signed-in agent granting on the consent form), then asks for a refund that is held, approved by a
// supervisor and read back as executed. (The v2 client has no tasks extension: it refuses a task result, so it does
// not declare one; tests/agent-api/waits/mcp-2026.integration.test.ts drives the extension.)

vi.mock("@/lib/auth/sign-in/auth", async () => (await import("../support/signed-in")).signedInMock());
const documents = vi.hoisted(() => ({ fetch: null as DocumentFetcher | null }));
vi.mock("@/lib/oauth/clients/fetch-document", () => ({
  fetchMetadataDocument: ((url, limits) => documents.fetch!(url, limits)) as DocumentFetcher,
}));

const ISSUER = MCP_BASE;
const REDIRECT = "http://127.0.0.1:33420/callback";
const CIMD_URL = "https://client.example/oauth/modern-client.json";

beforeAll(() => {
  process.env.NEXTAUTH_SECRET = "oauth-tests-signing-secret";
  documents.fetch = async () => ({
    ok: true,
    status: 200,
    contentType: "application/json",
    body: JSON.stringify({
      client_id: CIMD_URL,
      client_name: "Modern Desktop",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
    }),
  });
});

const modernClient = () =>
  new Client({ name: "oauth-modern", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });

const transport = (conversation: string, provider: MemoryProvider) =>
  new StreamableHTTPClientTransport(new URL(`/api/mcp?conversation=${conversation}`, MCP_BASE), {
    authProvider: provider,
    fetch: oauthRouteFetch,
  });

describe("the v2 SDK client's OAuth flow on protocol 2026-07-28", () => {
  it("a metadata-document client is sent to consent, granted, and its held refund is approved and read back as executed", async () => {
    const w = await createWorld();
    const conversation = await conversationFor(w.keys.agent, { customer_id: w.customers.ana });
    signedIn.user = agentSession(w);
    const provider = new MemoryProvider(REDIRECT, CIMD_URL);

    const refused = await modernClient()
      .connect(transport(conversation, provider))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UnauthorizedError);
    const url = provider.authorizationUrl!;
    expect(url.searchParams.get("client_id")).toBe(CIMD_URL);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("resource")).toBe(`${ISSUER}/api/mcp`);
    const form = new URLSearchParams(url.searchParams);
    form.set("decision", "grant");
    for (const scope of ["orders:read", "refunds:write"]) form.append("scope_choice", scope);
    form.set("step_up_proof", await delegationProof(CIMD_URL, url.searchParams.get("code_challenge")!));
    const answer = await authorizeRoute(
      new Request(`${ISSUER}/api/oauth/authorize`, {
        method: "POST",
        headers: {
          host: new URL(ISSUER).host,
          origin: ISSUER,
          "sec-fetch-site": "same-origin",
          "content-type": "application/x-www-form-urlencoded",
        },
        body: form.toString(),
      }),
    );
    expect(answer.status).toBe(303);
    const back = new URL(answer.headers.get("location")!);
    expect(back.searchParams.get("iss")).toBe(ISSUER);
    // The v2 client checks `iss` against the issuer it discovered (RFC 9207) before it redeems the code.
    await transport(conversation, provider).finishAuth(back.searchParams);

    const client = modernClient();
    await client.connect(transport(conversation, provider));
    expect(client.getProtocolEra()).toBe("modern");
    const held = await client.callTool({
      name: "issue_refund",
      arguments: { order_id: w.orders.o1004, amount_cents: 8000, currency: "USD", reason: "damaged" },
    });
    const { call_id: callId, status } = held.structuredContent as { call_id: string; status: string };
    expect(status).toBe("needs_approval");
    const request = await db.approvalRequest.findFirstOrThrow({ where: { originCallId: callId } });
    const supervisor = { userId: w.users.supervisor, tenantId: w.tenantId, role: "SUPERVISOR" as const };
    expect((await approveRequest(supervisor, request.id)).ok).toBe(true);
    const read = await client.callTool({
      name: "get_call_status",
      arguments: { call_id: callId },
    });
    expect(read.structuredContent).toMatchObject({ result: { status: "ok", disposition: "approved-executed" } });
    await client.close();
  });
});
