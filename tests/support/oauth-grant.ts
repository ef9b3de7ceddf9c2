import { expect } from "vitest";
import { POST as authorizeRoute } from "@/app/api/oauth/authorize/route";
import type { SessionUser } from "@/lib/auth/sign-in/auth";
import { delegationDigest } from "@/lib/oauth/consent/authorize";
import { TokenResponseSchema } from "@/lib/openapi/schemas";
import { CIMD_URL, REDIRECT } from "./cimd-fetcher";
import { MCP_BASE } from "./mcp-route";
import { oauthRouteFetch } from "./oauth";
import { signedIn } from "./signed-in";
import { provedFor } from "./step-up";
import type { World } from "./world";

// One connection made the way a client makes it, through the real routes: the consent form as the browser posts
// it (with the person's step-up proof when it passes the refund permission on, as the page makes it), then the code
// exchanged at the token endpoint. The test file mocks `@/lib/auth/sign-in/auth` with `signedInMock` and the metadata
// fetcher.

export { CIMD_URL, cimdDocument, REDIRECT } from "./cimd-fetcher";
export const ISSUER = MCP_BASE;
export const RESOURCE = `${ISSUER}/api/mcp`;
// The S256 challenge below is this verifier's.
export const VERIFIER = "dBjftJeZ4CVP-mJ92K9Y8-k1Y9mH2Uh5sR9V9t9Jj1gXk";
const CHALLENGE = "WrHlyGZTXKrfARMf6ggFndo_BRsga1GAB6KE6asQmhk";

export const agentSession = (w: World, id = w.users.agent): SessionUser => ({
  id,
  email: "agent",
  name: "Agent",
  role: "AGENT",
  tenantId: w.tenantId,
  tenantName: "t",
});

/**
 * The signed-in person's step-up proof for passing the refund permission to this authorization request, made in a
 * new session that becomes the signed-in one (as the consent page makes it before it posts).
 */
export async function delegationProof(clientId: string, codeChallenge: string): Promise<string> {
  const proof = await provedFor(signedIn.user!.id, {
    kind: "oauth.refunds-delegated",
    digest: delegationDigest(clientId, codeChallenge),
  });
  signedIn.sessionId = proof.sessionId;
  return proof.proofId;
}

/**
 * The person's answer on the consent page for these scopes, as the browser posts it; `extra` adds form fields. With
 * `refunds:write` it carries a fresh step-up proof unless `prove` is false.
 */
export async function consent(scopes: string[], extra: Record<string, string> = {}, prove = true) {
  const form = new URLSearchParams({
    response_type: "code",
    client_id: CIMD_URL,
    redirect_uri: REDIRECT,
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
    state: "s1",
    resource: RESOURCE,
    scope: scopes.join(" "),
    decision: "grant",
    ...extra,
  });
  for (const scope of scopes) form.append("scope_choice", scope);
  if (prove && scopes.includes("refunds:write"))
    form.set("step_up_proof", await delegationProof(form.get("client_id")!, form.get("code_challenge")!));
  return postConsent(form);
}

/**
 * The consent form as the browser posts it from toolgate's own page, to the real route; `cookie` when the test signs
 * in with a real session rather than the mocked one.
 */
export const postConsent = (form: URLSearchParams, cookie?: string) =>
  authorizeRoute(
    new Request(`${ISSUER}/api/oauth/authorize`, {
      method: "POST",
      headers: {
        host: "127.0.0.1:3000",
        origin: ISSUER,
        "sec-fetch-site": "same-origin",
        "content-type": "application/x-www-form-urlencoded",
        ...(cookie ? { cookie } : {}),
      },
      body: form.toString(),
    }),
  );

export const tokenEndpoint = (form: Record<string, string>) =>
  oauthRouteFetch(`${ISSUER}/api/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });

export interface Tokens {
  access_token: string;
  refresh_token: string;
  scope: string;
}

/** Consents to these scopes and exchanges the code: the connection's first pair. */
export async function connect(scopes: string[], extra: Record<string, string> = {}, prove = true): Promise<Tokens> {
  const answer = await consent(scopes, extra, prove);
  expect(answer.status, await answer.clone().text()).toBe(303);
  const code = new URL(answer.headers.get("location")!).searchParams.get("code");
  expect(code).not.toBeNull();
  const exchanged = await tokenEndpoint({
    grant_type: "authorization_code",
    code: code!,
    client_id: CIMD_URL,
    redirect_uri: REDIRECT,
    code_verifier: VERIFIER,
  });
  expect(exchanged.status).toBe(200);
  const tokens: unknown = await exchanged.json();
  // Every connection a test makes also checks the answer against the OpenAPI document's schema.
  expect(TokenResponseSchema.parse(tokens)).toEqual(tokens);
  return tokens as Tokens;
}

export const refreshWith = (refreshToken: string) =>
  tokenEndpoint({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: CIMD_URL });

/** One JSON-RPC request to /api/mcp with this access token (2025-11-25, no session: the server is stateless). */
export const mcpRequest = (conversation: string, accessToken: string, body: unknown) =>
  oauthRouteFetch(`${ISSUER}/api/mcp?conversation=${conversation}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${accessToken}`,
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify(body),
  });
