import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { GET as asMetadata } from "@/app/.well-known/oauth-authorization-server/route";
import { GET as prmRoot } from "@/app/.well-known/oauth-protected-resource/route";
import { GET as prmSuffixed } from "@/app/.well-known/oauth-protected-resource/[...path]/route";
import { GET as otherWellKnown } from "@/app/.well-known/[...path]/route";
import { POST as register } from "@/app/api/oauth/register/route";
import { POST as token } from "@/app/api/oauth/token/route";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { expect } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db } from "@/lib/db";
import { supervisorOf } from "./calls";
import { routeFetch } from "./mcp-route";
import type { World } from "./world";

/** fetch for an OAuth-speaking client: the discovery, registration and token routes in process, else /api/mcp. */
export const oauthRouteFetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const request = new Request(input, init);
  const headers = new Headers(request.headers);
  if (!headers.has("host")) headers.set("host", new URL(request.url).host);
  const routed = new Request(request, { headers });
  const path = new URL(request.url).pathname;
  if (path === "/.well-known/oauth-authorization-server") return asMetadata(routed);
  if (path === "/.well-known/oauth-protected-resource") return prmRoot(routed);
  if (path.startsWith("/.well-known/oauth-protected-resource/"))
    return prmSuffixed(routed, {
      params: Promise.resolve({ path: path.slice("/.well-known/oauth-protected-resource/".length).split("/") }),
    });
  if (path.startsWith("/.well-known/")) return otherWellKnown();
  if (path === "/api/oauth/register") return register(routed);
  if (path === "/api/oauth/token") return token(routed);
  return routeFetch(input, init);
}) as typeof fetch;

/** An MCP tools/list with an OAuth access token, sent with `send` (fetch to a running instance, or oauthRouteFetch). */
export const listToolsWith = (send: typeof fetch, base: string, conversation: string, accessToken: string) =>
  send(`${base}/api/mcp?conversation=${conversation}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${accessToken}`,
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });

/** An OAuth client provider as an agent runtime keeps one: in memory, recording where it was sent to sign in. */
export class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  constructor(
    readonly redirectUrl: string,
    readonly clientMetadataUrl?: string,
  ) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Test runtime",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * An agent's client over MCP proposes a refund that is held; the world's supervisor approves it; the client reads it
 * back as executed. The order gets exactly that refund. Returns the call's id.
 */
export async function heldRefundApprovedAndReadBack(w: World, client: Client, amountCents = 8000): Promise<string> {
  const order = w.orders.o1004;
  const amountsOf = async () =>
    (await db.refund.findMany({ where: { orderId: order }, orderBy: { createdAt: "asc" } })).map(
      (refund) => refund.amountCents,
    );
  const before = await amountsOf();
  const held = await client.callTool({
    name: "issue_refund",
    arguments: { order_id: order, amount_cents: amountCents, currency: "USD", reason: "damaged" },
  });
  expect(held.structuredContent).toMatchObject({ status: "needs_approval" });
  const callId = (held.structuredContent as { call_id: string }).call_id;
  const request = await db.approvalRequest.findFirstOrThrow({ where: { originCallId: callId, status: "pending" } });
  expect((await approveRequest(supervisorOf(w), request.id)).ok).toBe(true);
  const read = await client.callTool({ name: "get_call_status", arguments: { call_id: callId } });
  expect(read.structuredContent).toMatchObject({ result: { status: "ok", disposition: "approved-executed" } });
  expect(await amountsOf()).toEqual([...before, amountCents]);
  return callId;
}

/**
 * The time a test that waits for a fresh window needs: up to 30 s of waiting, then its work, which the suite's 30 s
 * default would leave almost nothing of.
 */
export const FRESH_WINDOW_TIMEOUT_MS = 90_000;

/** Waits for a fresh rate window (PostgreSQL's minute) when less than 30 seconds of this one are left. */
export async function freshWindow(): Promise<void> {
  const [{ second }] = await db.$queryRaw<{ second: number }[]>`SELECT EXTRACT(SECOND FROM now())::float AS second`;
  if (second > 30) await new Promise((resolve) => setTimeout(resolve, (60.5 - second) * 1000));
}
