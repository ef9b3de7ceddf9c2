import { readFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import type { DocumentFetcher } from "@/lib/oauth/clients/clients";

import { allowSelfRegistration } from "../support/admin-changes";
import { agentSession, delegationProof, postConsent } from "../support/oauth-grant";
import { signedIn } from "../support/signed-in";
import { agentConversation } from "../support/calls";
import { MCP_BASE, routeFetch } from "../support/mcp-route";
import { heldRefundApprovedAndReadBack, oauthRouteFetch } from "../support/oauth";
import { createWorld, type World } from "../support/world";

// The hosts as they really are (issue 34): each metadata document in tests/fixtures/cimd, served at its own URL by
// the document fetcher (the outbound guard's place), goes through the authorize and token route handlers with the
// host's own redirect URI and token authentication (ChatGPT: a private_key_jwt assertion signed by a test key
// served at its document's jwks_uri), and the token makes MCP tool calls: a held refund approved and read back.
// Hosts that register themselves do so with their registration request, Claude's asking for client_secret_post.

vi.mock("@/lib/auth/sign-in/auth", async () => (await import("../support/signed-in")).signedInMock());
const served = vi.hoisted(() => ({ byUrl: new Map<string, string>(), asked: [] as string[] }));
vi.mock("@/lib/oauth/clients/fetch-document", () => ({
  fetchMetadataDocument: (async (url) => {
    served.asked.push(url.href);
    const body = served.byUrl.get(url.href);
    return body === undefined
      ? { ok: true, status: 404, contentType: "text/plain", body: "not found" }
      : { ok: true, status: 200, contentType: "application/json", body };
  }) as DocumentFetcher,
}));

const ISSUER = MCP_BASE;
const TOKEN_ENDPOINT = `${ISSUER}/api/oauth/token`;
const fixture = (name: string) =>
  JSON.parse(readFileSync(path.join(__dirname, "..", "fixtures", "cimd", name), "utf8")) as Record<string, unknown> & {
    client_id: string;
    redirect_uris: string[];
  };
const CHATGPT = fixture("chatgpt.json");
// The S256 challenge below is this verifier's.
const VERIFIER = "dBjftJeZ4CVP-mJ92K9Y8-k1Y9mH2Uh5sR9V9t9Jj1gXk";
const CHALLENGE = "WrHlyGZTXKrfARMf6ggFndo_BRsga1GAB6KE6asQmhk";

let chatgptKey: CryptoKey;
beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = "oauth-tests-signing-secret";
  const pair = await generateKeyPair("RS256");
  chatgptKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: "chatgpt-test-1", use: "sig", alg: "RS256" };
  served.byUrl.set(String(CHATGPT.jwks_uri), JSON.stringify({ keys: [jwk] }));
  for (const name of ["claude.json", "claude-code.json", "chatgpt.json", "vscode.json", "goose.json"]) {
    const document = fixture(name);
    served.byUrl.set(document.client_id, JSON.stringify(document));
  }
});
beforeEach(() => {
  served.asked = [];
});

/** The consent form's grant, as the browser posts it from toolgate's own page. */
async function grant(w: World, params: Record<string, string>) {
  signedIn.user = agentSession(w);
  const form = new URLSearchParams(params);
  form.set("decision", "grant");
  for (const scope of ["orders:read", "refunds:write"]) form.append("scope_choice", scope);
  // Passing the refund permission on takes the person's step-up, as the page asks for it.
  form.set("step_up_proof", await delegationProof(params.client_id, params.code_challenge));
  return postConsent(form);
}

const authorization = (clientId: string, redirectUri: string) => ({
  response_type: "code",
  client_id: clientId,
  redirect_uri: redirectUri,
  code_challenge: CHALLENGE,
  code_challenge_method: "S256",
  state: "host-state",
  resource: `${ISSUER}/api/mcp`,
  scope: "orders:read refunds:write",
});

/** The code the grant sent back to `redirectUri`, checked to come back there with `state` and `iss`. */
async function grantedCode(w: World, clientId: string, redirectUri: string) {
  const answer = await grant(w, authorization(clientId, redirectUri));
  expect(answer.status).toBe(303);
  const back = new URL(answer.headers.get("location")!);
  expect(back.href.startsWith(redirectUri)).toBe(true);
  expect([back.searchParams.get("state"), back.searchParams.get("iss")]).toEqual(["host-state", ISSUER]);
  return back.searchParams.get("code")!;
}

const token = (form: Record<string, string>) =>
  oauthRouteFetch(TOKEN_ENDPOINT, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });

const codeExchange = (code: string, clientId: string, redirectUri: string) => ({
  grant_type: "authorization_code",
  code,
  client_id: clientId,
  redirect_uri: redirectUri,
  code_verifier: VERIFIER,
  resource: `${ISSUER}/api/mcp`,
});

/** ChatGPT's client assertion (RFC 7523), signed by the key its test jwks_uri serves; `changes` alter claims. */
function chatgptAssertion(changes: { aud?: string; exp?: number; jti?: string } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: "RS256", kid: "chatgpt-test-1" })
    .setIssuer(CHATGPT.client_id)
    .setSubject(CHATGPT.client_id)
    .setAudience(changes.aud ?? TOKEN_ENDPOINT)
    .setIssuedAt(now - 5)
    .setExpirationTime(changes.exp ?? now + 60)
    .setJti(changes.jti ?? crypto.randomUUID())
    .sign(chatgptKey);
}

const withAssertion = async (form: Record<string, string>, assertion: string | Promise<string>) => ({
  ...form,
  client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
  client_assertion: await assertion,
});

/** With the access token: a refund above the limit is held, a supervisor approves it, and it reads back executed. */
/** A host's access token drives the held refund's round trip over MCP, as the host itself would. */
async function heldRefundWithToken(w: World, accessToken: string) {
  const conversation = await agentConversation(w);
  const client = new Client({ name: "host", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`/api/mcp?conversation=${conversation}`, MCP_BASE), {
      fetch: routeFetch,
      requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
    }),
  );
  try {
    await heldRefundApprovedAndReadBack(w, client);
  } finally {
    await client.close();
  }
}

const unspentCodes = (w: World) => db.oAuthCode.count({ where: { grant: { tenantId: w.tenantId }, usedAt: null } });

describe("the metadata documents the hosts publish", () => {
  // Each public host as it connects: its document, the redirect URI it sends (a loopback one on the port it got).
  for (const [name, redirectUri] of [
    ["claude.json", "https://claude.ai/api/mcp/auth_callback"],
    ["claude-code.json", "http://localhost:49152/callback"],
    ["vscode.json", "http://127.0.0.1:33418/"],
    ["goose.json", "http://localhost:51234/oauth_callback"],
  ] as const) {
    it(`${name}: accepted as published, extra grant types ignored; its token holds a refund that is approved and read back`, async () => {
      const w = await createWorld();
      const document = fixture(name);
      const code = await grantedCode(w, document.client_id, redirectUri);
      expect(served.asked).toContain(document.client_id);
      const issued = await token(codeExchange(code, document.client_id, redirectUri));
      expect(issued.status).toBe(200);
      const body = (await issued.json()) as { access_token: string; refresh_token: string };
      await heldRefundWithToken(w, body.access_token);
      const connection = await db.oAuthGrant.findFirstOrThrow({
        where: { tenantId: w.tenantId },
        include: { client: true },
      });
      expect(connection).toMatchObject({ redirectUri, scopes: ["orders:read", "refunds:write"] });
      expect(connection.client).toMatchObject({ kind: "cimd", authMethod: "none", name: document.client_name });
    });
  }

  it("chatgpt.json: private_key_jwt with a key at its jwks_uri; wrong audience, expired, missing or replayed assertions are refused and spend nothing", async () => {
    const w = await createWorld();
    const [redirectUri] = CHATGPT.redirect_uris;
    const code = await grantedCode(w, CHATGPT.client_id, redirectUri);
    expect(await db.oAuthClient.findUniqueOrThrow({ where: { id: CHATGPT.client_id } })).toMatchObject({
      authMethod: "private_key_jwt",
      jwksUri: CHATGPT.jwks_uri,
    });
    const exchange = codeExchange(code, CHATGPT.client_id, redirectUri);
    const now = Math.floor(Date.now() / 1000);
    for (const [form, fault] of [
      [exchange, /private_key_jwt/],
      [await withAssertion(exchange, chatgptAssertion({ aud: "https://elsewhere.example/token" })), /aud/],
      [await withAssertion(exchange, chatgptAssertion({ exp: now - 120 })), /expired/],
      [await withAssertion(exchange, chatgptAssertion({ exp: now + 3600 })), /within 600 seconds/],
    ] as [Record<string, string>, RegExp][]) {
      const refused = await token(form);
      expect(refused.status).toBe(401);
      const answer = (await refused.json()) as { error: string; error_description: string };
      expect(answer.error).toBe("invalid_client");
      expect(answer.error_description).toMatch(fault);
    }
    expect(await unspentCodes(w)).toBe(1);

    const assertion = await chatgptAssertion();
    const issued = await token(await withAssertion(exchange, assertion));
    expect(issued.status).toBe(200);
    const body = (await issued.json()) as { access_token: string; refresh_token: string };
    expect(served.asked).toContain(CHATGPT.jwks_uri);

    // The same assertion a second time (its jti already used) is refused, here on a refresh.
    const refresh = { grant_type: "refresh_token", refresh_token: body.refresh_token, client_id: CHATGPT.client_id };
    const replayed = await token(await withAssertion(refresh, assertion));
    expect(replayed.status).toBe(401);
    expect(((await replayed.json()) as { error_description: string }).error_description).toMatch(/jti/);
    const refreshed = await token(await withAssertion(refresh, chatgptAssertion()));
    expect(refreshed.status).toBe(200);
    await heldRefundWithToken(w, ((await refreshed.json()) as { access_token: string }).access_token);
  });

  it("a document that cannot be used goes back to its own redirect URI as unauthorized_client; to any other address it is a page", async () => {
    const w = await createWorld();
    const clientId = "https://host.example/oauth/secret-client.json";
    const redirectUri = "https://host.example/oauth/callback";
    for (const unusable of [
      { token_endpoint_auth_method: "client_secret_basic" },
      { token_endpoint_auth_method: "private_key_jwt" },
      { grant_types: ["urn:ietf:params:oauth:grant-type:device_code"] },
      { client_secret: "published-for-all-to-see" },
    ]) {
      await db.oAuthClient.deleteMany({ where: { id: clientId } });
      served.byUrl.set(clientId, JSON.stringify({ client_id: clientId, redirect_uris: [redirectUri], ...unusable }));
      const answer = await grant(w, authorization(clientId, redirectUri));
      expect(answer.status).toBe(303);
      const back = new URL(answer.headers.get("location")!);
      expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
      expect([back.searchParams.get("error"), back.searchParams.get("state"), back.searchParams.get("iss")]).toEqual([
        "unauthorized_client",
        "host-state",
        ISSUER,
      ]);
      expect(back.searchParams.get("code")).toBeNull();
      const elsewhere = await grant(w, authorization(clientId, "https://attacker.example/cb"));
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.headers.get("location")).toBeNull();
    }
    expect(await db.oAuthGrant.count({ where: { tenantId: w.tenantId } })).toBe(0);
    expect(await db.oAuthClient.count({ where: { id: clientId } })).toBe(0);
  });
});

describe("hosts that register themselves", () => {
  const register = (body: unknown) =>
    oauthRouteFetch(`${ISSUER}/api/oauth/register`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-forwarded-for": `198.51.100.${Math.floor(Math.random() * 250) + 1}`,
      },
      body: JSON.stringify(body),
    });

  it("claude.registration.json: client_secret_post gets a secret, stored hashed, required at the token endpoint", async () => {
    const w = await createWorld();
    await allowSelfRegistration(w);
    const registered = await register(fixture("claude.registration.json"));
    expect(registered.status).toBe(201);
    const client = (await registered.json()) as Record<string, unknown> & { client_id: string; client_secret: string };
    expect(client).toMatchObject({ token_endpoint_auth_method: "client_secret_post", client_secret_expires_at: 0 });
    expect(client.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const row = await db.oAuthClient.findUniqueOrThrow({ where: { id: client.client_id } });
    expect(row).toMatchObject({ kind: "dcr", authMethod: "client_secret_post" });
    expect(row.secretHash).not.toContain(client.client_secret);

    const [redirectUri] = fixture("claude.registration.json").redirect_uris;
    const code = await grantedCode(w, client.client_id, redirectUri);
    const exchange = codeExchange(code, client.client_id, redirectUri);
    for (const form of [exchange, { ...exchange, client_secret: "not-the-secret" }]) {
      const refused = await token(form);
      expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([401, "invalid_client"]);
    }
    expect(await unspentCodes(w)).toBe(1);
    const issued = await token({ ...exchange, client_secret: client.client_secret });
    expect(issued.status).toBe(200);
    await heldRefundWithToken(w, ((await issued.json()) as { access_token: string }).access_token);
  });

  it("cursor.registration.json: a public client with its documented redirect URIs, grant types it does not need dropped", async () => {
    const w = await createWorld();
    await allowSelfRegistration(w);
    const registered = await register({
      ...fixture("cursor.registration.json"),
      grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
    });
    expect(registered.status).toBe(201);
    const client = (await registered.json()) as { client_id: string; client_secret?: string; grant_types: string[] };
    expect(client.client_secret).toBeUndefined();
    expect(client.grant_types).toEqual(["authorization_code", "refresh_token"]);
    const redirectUri = "http://localhost:8787/callback";
    const code = await grantedCode(w, client.client_id, redirectUri);
    const issued = await token(codeExchange(code, client.client_id, redirectUri));
    expect(issued.status).toBe(200);
    await heldRefundWithToken(w, ((await issued.json()) as { access_token: string }).access_token);
  });

  it("refuses what it cannot honour with an RFC 7591 error saying what to send instead", async () => {
    const before = await db.oAuthClient.count();
    for (const [body, fault] of [
      [
        { redirect_uris: ["https://host.example/cb"], token_endpoint_auth_method: "client_secret_basic" },
        /client_secret_post/,
      ],
      [{ redirect_uris: ["https://host.example/cb"], grant_types: ["client_credentials"] }, /authorization_code/],
    ] as [Record<string, unknown>, RegExp][]) {
      const refused = await register(body);
      expect(refused.status).toBe(400);
      const answer = (await refused.json()) as { error: string; error_description: string };
      expect(answer.error).toBe("invalid_client_metadata");
      expect(answer.error_description).toMatch(fault);
    }
    expect(await db.oAuthClient.count()).toBe(before);
  });
});
