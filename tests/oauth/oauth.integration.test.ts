import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { hkdfSync } from "node:crypto";
import { SignJWT } from "jose";
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { POST as authorizeRoute } from "@/app/api/oauth/authorize/route";
import { db } from "@/lib/db";
import type { DocumentFetcher } from "@/lib/oauth/clients/clients";
import { revokeConnection } from "@/lib/oauth/consent/connections";
import { allowSelfRegistration } from "../support/admin-changes";
import { agentConversation } from "../support/calls";
import { MCP_BASE } from "../support/mcp-route";
import { heldRefundApprovedAndReadBack, listToolsWith, MemoryProvider, oauthRouteFetch } from "../support/oauth";
import { agentSession, delegationProof } from "../support/oauth-grant";
import { signedIn } from "../support/signed-in";
import { createWorld, type World } from "../support/world";

// MCP authorization (decision 017) through the route handlers in process: the MCP SDK client's own OAuth provider
// discovers, registers (or is known by its metadata document), is sent to the consent page, where a signed-in agent
// grants, and then calls tools as that agent; and every hostile input an attacker could send is refused with a 4xx
// that changes nothing.

vi.mock("@/lib/auth/sign-in/auth", async () => (await import("../support/signed-in")).signedInMock());
const documents = vi.hoisted(() => ({ fetch: null as DocumentFetcher | null }));
vi.mock("@/lib/oauth/clients/fetch-document", () => ({
  fetchMetadataDocument: ((url, limits) => documents.fetch!(url, limits)) as DocumentFetcher,
}));

const ISSUER = MCP_BASE;
const RESOURCE = `${ISSUER}/api/mcp`;
const REDIRECT = "http://127.0.0.1:33418/callback";
const CIMD_URL = "https://client.example/oauth/client.json";
const cimdDocument = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    client_id: CIMD_URL,
    client_name: "Example Desktop",
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: "none",
    ...overrides,
  });

beforeAll(() => {
  process.env.NEXTAUTH_SECRET = "oauth-tests-signing-secret";
});
beforeEach(() => {
  documents.fetch = async () => ({ ok: true, status: 200, contentType: "application/json", body: cimdDocument() });
});

/** The person's answer on the consent page, as the browser posts it (`origin` null: as a no-referrer page does). */
async function decide(
  params: URLSearchParams,
  decision: "grant" | "deny",
  scopes?: string[],
  origin: string | null = ISSUER,
  site = "same-origin",
) {
  const form = new URLSearchParams(params);
  form.set("decision", decision);
  const chosen = scopes ?? params.get("scope")?.split(" ") ?? ["orders:read", "refunds:write"];
  for (const scope of chosen) form.append("scope_choice", scope);
  // The page's step-up for passing the refund permission on (tests/oauth/oauth-connections…).
  if (decision === "grant" && chosen.includes("refunds:write") && signedIn.user)
    form.set("step_up_proof", await delegationProof(params.get("client_id") ?? "", params.get("code_challenge") ?? ""));
  return authorizeRoute(
    new Request(`${ISSUER}/api/oauth/authorize`, {
      method: "POST",
      headers: {
        host: "127.0.0.1:3000",
        ...(origin === null ? {} : { origin }),
        "sec-fetch-site": site,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: form.toString(),
    }),
  );
}

const token = (form: Record<string, string>) =>
  oauthRouteFetch(`${ISSUER}/api/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });

function transport(conversation: string, provider: MemoryProvider) {
  return new StreamableHTTPClientTransport(new URL(`/api/mcp?conversation=${conversation}`, MCP_BASE), {
    authProvider: provider,
    fetch: oauthRouteFetch,
  });
}

/** The SDK client's whole flow: 401, discovery, registration or CIMD, consent, code exchange, connected client. */
async function connectWithOAuth(w: World, conversation: string, provider: MemoryProvider, scopes?: string[]) {
  signedIn.user = agentSession(w);
  const first = new Client({ name: "oauth-test", version: "1" });
  const error = await first.connect(transport(conversation, provider)).catch((failure: unknown) => failure);
  expect(error).toBeInstanceOf(UnauthorizedError);
  const url = provider.authorizationUrl!;
  expect(url.pathname).toBe("/oauth/authorize");
  expect(url.searchParams.get("code_challenge_method")).toBe("S256");
  expect(url.searchParams.get("resource")).toBe(RESOURCE);
  const answer = await decide(url.searchParams, "grant", scopes);
  expect(answer.status).toBe(303);
  const back = new URL(answer.headers.get("location")!);
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
  expect(back.searchParams.get("iss")).toBe(ISSUER);
  expect(back.searchParams.get("state")).toBe(url.searchParams.get("state"));
  const finishing = transport(conversation, provider);
  await finishing.finishAuth(back.searchParams.get("code")!);
  const client = new Client({ name: "oauth-test", version: "1" });
  await client.connect(transport(conversation, provider));
  return { client, authorizationUrl: url };
}

describe("discovery", () => {
  it("publishes protected resource and authorization server metadata, and a 401 points at them", async () => {
    const prm = await (await oauthRouteFetch(`${ISSUER}/.well-known/oauth-protected-resource/api/mcp`)).json();
    expect(prm).toMatchObject({ resource: RESOURCE, authorization_servers: [ISSUER] });
    expect(await (await oauthRouteFetch(`${ISSUER}/.well-known/oauth-protected-resource`)).json()).toEqual(prm);
    const other = await oauthRouteFetch(`${ISSUER}/.well-known/oauth-protected-resource/api/v1`);
    expect(other.status).toBe(404);
    const as = await (await oauthRouteFetch(`${ISSUER}/.well-known/oauth-authorization-server`)).json();
    expect(as).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/oauth/authorize`,
      token_endpoint: `${ISSUER}/api/oauth/token`,
      registration_endpoint: `${ISSUER}/api/oauth/register`,
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
      token_endpoint_auth_methods_supported: ["none", "private_key_jwt", "client_secret_post"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      authorization_response_iss_parameter_supported: true,
    });
  });

  it("an issuer taken from the Host header (no NEXTAUTH_URL or OAUTH_ISSUER, development) is never cacheable; a configured one is", async () => {
    const paths = [
      "/.well-known/oauth-authorization-server",
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/api/mcp",
    ];
    for (const path of paths) {
      const forged = await oauthRouteFetch(`${ISSUER}${path}`, { headers: { host: "attacker.example" } });
      expect([path, forged.headers.get("cache-control"), JSON.stringify(await forged.json())]).toEqual([
        path,
        "no-store",
        expect.stringContaining("http://attacker.example"),
      ]);
    }
    process.env.OAUTH_ISSUER = "https://toolgate.example";
    try {
      for (const path of paths) {
        const answer = await oauthRouteFetch(`${ISSUER}${path}`, { headers: { host: "attacker.example" } });
        const body = JSON.stringify(await answer.json());
        expect([path, answer.headers.get("cache-control"), body.includes("attacker")]).toEqual([
          path,
          "public, max-age=300",
          false,
        ]);
      }
    } finally {
      delete process.env.OAUTH_ISSUER;
    }
  });
});

describe("a real client's OAuth flow, no pasted key", () => {
  it("a self-registered client (DCR, as Cursor and mcp-remote do) connects once the admin allows it, and its refund is held, approved and read back", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w);
    const provider = new MemoryProvider(REDIRECT);
    signedIn.user = agentSession(w);

    // Off by default: the client registers, but the consent refuses it.
    const blocked = new Client({ name: "oauth-test", version: "1" });
    await blocked.connect(transport(conversation, provider)).catch(() => undefined);
    const refused = await decide(provider.authorizationUrl!.searchParams, "grant");
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/admin has not allowed/);
    expect(await db.oAuthGrant.count({ where: { tenantId: w.tenantId } })).toBe(0);

    await allowSelfRegistration(w);
    const { client } = await connectWithOAuth(w, conversation, provider);
    expect(provider.saved?.refresh_token).toBeDefined();
    const callId = await heldRefundApprovedAndReadBack(w, client);
    const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: w.tenantId } });
    expect(grant).toMatchObject({
      agentId: w.users.agent,
      scopes: ["orders:read", "orders:write", "email:send", "refunds:write"],
    });
    expect(await db.toolCall.findUniqueOrThrow({ where: { id: callId } })).toMatchObject({
      conversationId: conversation,
    });
    const audit = await db.auditLog.findMany({ where: { tenantId: w.tenantId }, orderBy: { id: "asc" } });
    expect(audit.map((row) => row.action)).toEqual([
      "change.proposed",
      "oauth.registration-allowed",
      "change.approved",
      "oauth.granted",
    ]);
    await client.close();
  });

  it("a client known by its metadata document (CIMD, as VS Code does) connects with only the scopes the person chose", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w);
    const provider = new MemoryProvider(REDIRECT, CIMD_URL);
    const { client, authorizationUrl } = await connectWithOAuth(w, conversation, provider, [
      "orders:read",
      "refunds:write",
    ]);
    expect(authorizationUrl.searchParams.get("client_id")).toBe(CIMD_URL);
    await heldRefundApprovedAndReadBack(w, client);
    // The connection holds no email:send, so the conversation's scope narrows for it: a scope challenge (403
    // insufficient_scope, tests/oauth/oauth-scopes…), which this SDK answers with a refresh and then gives up on.
    const mail = await client
      .callTool({ name: "send_status_email", arguments: { order_id: w.orders.o1004 } })
      .catch((error: unknown) => error);
    expect(String(mail)).toMatch(/403/);
    expect(await db.toolCall.count({ where: { conversationId: conversation, toolName: "send_status_email" } })).toBe(0);
    await client.close();
  });

  it("refreshes with a rotated token; reusing the old one revokes the connection and its next call is 401", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w);
    const provider = new MemoryProvider(REDIRECT, CIMD_URL);
    const { client } = await connectWithOAuth(w, conversation, provider);
    const first = provider.saved!.refresh_token!;
    const rotated = await token({ grant_type: "refresh_token", refresh_token: first, client_id: CIMD_URL });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("cache-control")).toBe("no-store");
    const body = (await rotated.json()) as { refresh_token: string; access_token: string };
    expect(body.refresh_token).not.toBe(first);
    // Past the grace window in which a parallel refresh gets the same pair (tests/oauth/oauth-refresh…).
    await db.oAuthRefreshToken.updateMany({
      where: { grant: { tenantId: w.tenantId }, usedAt: { not: null } },
      data: { usedAt: new Date(Date.now() - 60_000) },
    });
    const reused = await token({ grant_type: "refresh_token", refresh_token: first, client_id: CIMD_URL });
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: "invalid_grant" });
    const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: w.tenantId } });
    expect(grant.revokedReason).toBe("refresh-token-reused");
    // Every token of the family is dead: the newer refresh token, and the access tokens already out.
    const newer = await token({ grant_type: "refresh_token", refresh_token: body.refresh_token, client_id: CIMD_URL });
    expect(newer.status).toBe(400);
    const call = await listToolsWith(oauthRouteFetch, MCP_BASE, conversation, body.access_token);
    expect(call.status).toBe(401);
    expect(call.headers.get("www-authenticate")).toContain('error="invalid_token"');
    await client.close();
  });

  it("an admin's revocation makes the connection's next call 401, with an audit entry", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w);
    const provider = new MemoryProvider(REDIRECT, CIMD_URL);
    const { client } = await connectWithOAuth(w, conversation, provider);
    const access = provider.saved!.access_token;
    expect((await listToolsWith(oauthRouteFetch, MCP_BASE, conversation, access)).status).toBe(200);
    const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: w.tenantId } });
    expect(grant.lastUsedAt).not.toBeNull();
    expect(await revokeConnection({ id: w.users.admin, tenantId: w.tenantId }, grant.id)).toBe(true);
    expect((await listToolsWith(oauthRouteFetch, MCP_BASE, conversation, access)).status).toBe(401);
    expect(await revokeConnection({ id: w.users.admin, tenantId: w.tenantId }, grant.id)).toBe(false);
    const audit = await db.auditLog.findFirstOrThrow({ where: { tenantId: w.tenantId, action: "oauth.revoked" } });
    expect(audit).toMatchObject({ actorId: w.users.admin, detail: { grantId: grant.id, reason: "revoked-by-admin" } });
    await client.close();
  });
});

/** A valid authorization request of the CIMD client, as its authorization URL carries it. */
function authorizationParams(overrides: Record<string, string | null> = {}) {
  const params = new URLSearchParams({
    response_type: "code",
    client_id: CIMD_URL,
    redirect_uri: REDIRECT,
    code_challenge: "WrHlyGZTXKrfARMf6ggFndo_BRsga1GAB6KE6asQmhk",
    code_challenge_method: "S256",
    state: "s1",
    resource: RESOURCE,
    scope: "orders:read",
  });
  for (const [name, value] of Object.entries(overrides))
    if (value === null) params.delete(name);
    else params.set(name, value);
  return params;
}
// The S256 challenge above is this verifier's.
const VERIFIER = "dBjftJeZ4CVP-mJ92K9Y8-k1Y9mH2Uh5sR9V9t9Jj1gXk";

async function grantedCode(w: World) {
  signedIn.user = agentSession(w);
  const answer = await decide(authorizationParams(), "grant");
  expect(answer.status).toBe(303);
  return new URL(answer.headers.get("location")!).searchParams.get("code")!;
}

const grantCount = (w: World) => db.oAuthGrant.count({ where: { tenantId: w.tenantId } });

describe("hostile inputs get a clear 4xx and change nothing", () => {
  it("an unknown client or a redirect URI it did not register is a page, never a redirect", async () => {
    const w = await createWorld();
    signedIn.user = agentSession(w);
    const unknown = await decide(authorizationParams({ client_id: "oc_nobody_registered_this" }), "grant");
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get("location")).toBeNull();
    const elsewhere = await decide(authorizationParams({ redirect_uri: "https://attacker.example/cb" }), "grant");
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.text()).toMatch(/not one it registered/);
    expect(await grantCount(w)).toBe(0);
  });

  it("a loopback redirect may change its port (RFC 8252) but not its path", async () => {
    const w = await createWorld();
    signedIn.user = agentSession(w);
    const port = await decide(authorizationParams({ redirect_uri: "http://127.0.0.1:50000/callback" }), "grant");
    expect(port.status).toBe(303);
    const path = await decide(authorizationParams({ redirect_uri: "http://127.0.0.1:33418/other" }), "grant");
    expect(path.status).toBe(400);
  });

  it("no PKCE, plain PKCE or another resource go back to the client as errors, granting nothing", async () => {
    const w = await createWorld();
    signedIn.user = agentSession(w);
    for (const [overrides, error] of [
      [{ code_challenge: null }, "invalid_request"],
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ resource: "https://other.example/mcp" }, "invalid_target"],
      [{ response_type: "token" }, "unsupported_response_type"],
    ] as [Record<string, string | null>, string][]) {
      const answer = await decide(authorizationParams(overrides), "grant");
      expect(answer.status).toBe(303);
      const back = new URL(answer.headers.get("location")!);
      expect([back.searchParams.get("error"), back.searchParams.get("iss"), back.searchParams.get("code")]).toEqual([
        error,
        ISSUER,
        null,
      ]);
    }
    expect(await grantCount(w)).toBe(0);
  });

  it("a form posted from another site is refused before anything is read", async () => {
    const w = await createWorld();
    signedIn.user = agentSession(w);
    for (const [origin, site] of [
      ["https://attacker.example", "cross-site"],
      ["null", "cross-site"],
      [null, "same-site"],
    ] as [string | null, string][]) {
      const answer = await decide(authorizationParams(), "grant", undefined, origin, site);
      expect(answer.status).toBe(403);
    }
    expect(await grantCount(w)).toBe(0);
    // The consent page itself posts with Origin null (Referrer-Policy: no-referrer) and Sec-Fetch-Site same-origin.
    expect((await decide(authorizationParams(), "grant", undefined, "null")).status).toBe(303);
  });

  it("refusing sends access_denied back and grants nothing", async () => {
    const w = await createWorld();
    signedIn.user = agentSession(w);
    const answer = await decide(authorizationParams(), "deny");
    expect(new URL(answer.headers.get("location")!).searchParams.get("error")).toBe("access_denied");
    expect(await grantCount(w)).toBe(0);
  });

  it("a missing or wrong PKCE verifier, or another redirect URI, does not spend the code", async () => {
    const w = await createWorld();
    const code = await grantedCode(w);
    const base = { grant_type: "authorization_code", code, client_id: CIMD_URL, redirect_uri: REDIRECT };
    const missing = await token(base);
    expect([missing.status, ((await missing.json()) as { error: string }).error]).toEqual([400, "invalid_request"]);
    const wrong = await token({ ...base, code_verifier: "x".repeat(43) });
    expect([wrong.status, ((await wrong.json()) as { error: string }).error]).toEqual([400, "invalid_grant"]);
    const redirect = await token({ ...base, code_verifier: VERIFIER, redirect_uri: "http://127.0.0.1:1/callback" });
    expect(redirect.status).toBe(400);
    expect(await db.oAuthCode.count({ where: { grant: { tenantId: w.tenantId }, usedAt: { not: null } } })).toBe(0);
    const good = await token({ ...base, code_verifier: VERIFIER });
    expect(good.status).toBe(200);
    expect(good.headers.get("cache-control")).toBe("no-store");
  });

  it("a replayed code is refused and revokes what the first exchange issued", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w);
    const code = await grantedCode(w);
    const form = {
      grant_type: "authorization_code",
      code,
      client_id: CIMD_URL,
      redirect_uri: REDIRECT,
      code_verifier: VERIFIER,
    };
    const first = (await (await token(form)).json()) as { access_token: string };
    expect((await listToolsWith(oauthRouteFetch, MCP_BASE, conversation, first.access_token)).status).toBe(200);
    const replay = await token(form);
    expect([replay.status, ((await replay.json()) as { error: string }).error]).toEqual([400, "invalid_grant"]);
    expect((await listToolsWith(oauthRouteFetch, MCP_BASE, conversation, first.access_token)).status).toBe(401);
  });

  it("other grant types (client_credentials) and unknown codes are refused", async () => {
    const cc = await token({ grant_type: "client_credentials", client_id: CIMD_URL });
    expect(((await cc.json()) as { error: string }).error).toBe("unsupported_grant_type");
    const unknown = await token({
      grant_type: "authorization_code",
      code: "made-up",
      client_id: CIMD_URL,
      redirect_uri: REDIRECT,
      code_verifier: VERIFIER,
    });
    expect(((await unknown.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("a NUL in the token form, the registration or the consent form is a 400 in words, never a database error", async () => {
    const w = await createWorld();
    signedIn.user = agentSession(w);
    const grantsBefore = await grantCount(w);
    const clientsBefore = await db.oAuthClient.count();
    const nul = await token({ grant_type: "refresh_token", refresh_token: "x", client_id: "\u0000" });
    expect([nul.status, await nul.json()]).toEqual([
      400,
      { error: "invalid_request", error_description: expect.stringContaining("no NUL character") },
    ]);
    const registered = await oauthRouteFetch(`${ISSUER}/api/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "a\u0000", redirect_uris: [REDIRECT] }),
    });
    expect([registered.status, ((await registered.json()) as { error: string }).error]).toEqual([
      400,
      "invalid_client_metadata",
    ]);
    const params = authorizationParams();
    params.set("client_id", "\u0000");
    const consent = await decide(params, "grant");
    expect(consent.status).toBe(400);
    expect(await consent.text()).toContain("The form could not be read");
    expect(await grantCount(w)).toBe(grantsBefore);
    expect(await db.oAuthClient.count()).toBe(clientsBefore);
  });

  it("a token for another audience, expired, or signed by an unknown key is 401", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w);
    const code = await grantedCode(w);
    const issued = (await (
      await token({
        grant_type: "authorization_code",
        code,
        client_id: CIMD_URL,
        redirect_uri: REDIRECT,
        code_verifier: VERIFIER,
      })
    ).json()) as { access_token: string };
    expect((await listToolsWith(oauthRouteFetch, MCP_BASE, conversation, issued.access_token)).status).toBe(200);
    const [, payload] = issued.access_token.split(".");
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>;
    // The server's own key (HKDF of NEXTAUTH_SECRET, as lib/auth/keys/access-tokens.ts derives it), so only the claim
    // under test is wrong; and a stranger's key with every claim right.
    const serverKey = new Uint8Array(
      hkdfSync("sha256", process.env.NEXTAUTH_SECRET!, "toolgate", "oauth access token", 32),
    );
    const stranger = new TextEncoder().encode("an-attackers-own-signing-key-32b");
    const now = Math.floor(Date.now() / 1000);
    const forge = (key: Uint8Array, changes: Record<string, unknown>) =>
      new SignJWT({ ...claims, ...changes }).setProtectedHeader({ alg: "HS256", typ: "at+jwt" }).sign(key);
    expect((await listToolsWith(oauthRouteFetch, MCP_BASE, conversation, await forge(serverKey, {}))).status).toBe(200);
    for (const forged of [
      await forge(serverKey, { aud: "https://other.example/api/mcp" }),
      await forge(serverKey, { exp: now - 60, iat: now - 400 }),
      await forge(stranger, {}),
      issued.access_token.replace(/\.[^.]+$/, ".AAAA"),
    ]) {
      const answer = await listToolsWith(oauthRouteFetch, MCP_BASE, conversation, forged);
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toContain('error="invalid_token"');
    }
    expect(await db.toolCall.count({ where: { conversationId: conversation } })).toBe(0);
  });

  it("a metadata document that cannot be fetched, is oversized, names another client or no usable redirect URI is refused in one sentence; the log says why", async () => {
    const w = await createWorld();
    signedIn.user = agentSession(w);
    const cases: [DocumentFetcher, RegExp][] = [
      [async () => ({ ok: false, reason: "the address 127.0.0.1 is not reachable from here" }), /127\.0\.0\.1/],
      [async () => ({ ok: false, reason: "the document is larger than 16384 bytes" }), /larger/],
      [async () => ({ ok: false, reason: "no answer within 5000 ms" }), /5000 ms/],
      [async () => ({ ok: true, status: 404, contentType: "text/html", body: "" }), /answered 404/],
      [
        async () => ({
          ok: true,
          status: 200,
          contentType: "application/json",
          body: cimdDocument({ client_id: "https://x.example/c.json" }),
        }),
        /another client_id/,
      ],
      [
        async () => ({
          ok: true,
          status: 200,
          contentType: "application/json",
          body: cimdDocument({ client_id: "https://client-4.example/c.json", redirect_uris: ["javascript:alert(1)"] }),
        }),
        /redirect_uris/,
      ],
      [async () => ({ ok: true, status: 200, contentType: "application/json", body: "<html>" }), /not JSON/],
    ];
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      for (const [index, [fetcher, why]] of cases.entries()) {
        documents.fetch = fetcher;
        const clientId = `https://client-${index}-${w.tenantId}.example/c.json`;
        const answer = await decide(authorizationParams({ client_id: clientId }), "grant");
        expect([clientId, answer.status, await answer.text()]).toEqual([
          clientId,
          400,
          "This client cannot be used: its metadata document could not be fetched, or is not a valid client metadata document.",
        ]);
        const line = String(logged.mock.calls.at(-1)?.[0]);
        expect(line).toContain('"event":"oauth.metadata-document-refused"');
        expect(line).toContain(clientId);
        expect(line).toMatch(why);
      }
    } finally {
      logged.mockRestore();
    }
    expect(await grantCount(w)).toBe(0);
  });

  it("registration refuses unsafe redirect URIs and confidential clients, and is rate limited per address", async () => {
    const address = `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
    const register = (body: unknown) =>
      oauthRouteFetch(`${ISSUER}/api/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": address },
        body: JSON.stringify(body),
      });
    const before = await db.oAuthClient.count();
    for (const redirect of [
      "javascript:alert(1)",
      "http://attacker.example/cb",
      "https://client.example/cb#fragment",
      "data:text/html,hi",
    ]) {
      const refused = await register({ client_name: "x", redirect_uris: [redirect] });
      expect([redirect, refused.status, ((await refused.json()) as { error: string }).error]).toEqual([
        redirect,
        400,
        "invalid_redirect_uri",
      ]);
    }
    const secret = await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_basic" });
    expect(((await secret.json()) as { error: string }).error).toBe("invalid_client_metadata");
    const notJson = await oauthRouteFetch(`${ISSUER}/api/oauth/register`, { method: "POST", body: "{" });
    expect(notJson.status).toBe(400);
    expect(await db.oAuthClient.count()).toBe(before);

    for (let index = 0; index < 10; index += 1)
      expect((await register({ client_name: `c${index}`, redirect_uris: [REDIRECT] })).status).toBe(201);
    const limited = await register({ client_name: "one too many", redirect_uris: [REDIRECT] });
    expect(limited.status).toBe(429);
    expect(await db.oAuthClient.count()).toBe(before + 10);
  });
});
