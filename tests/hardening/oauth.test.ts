import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { chromium } from "@playwright/test";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db } from "@/lib/db";
import { allowSelfRegistration } from "../support/admin-changes";
import { hashPassword } from "@/lib/auth/password-hash";
import { delegationDigest } from "@/lib/oauth/consent/authorize";
import { conversationOver } from "../support/api-over-http";
import { callAction, personCookie } from "../support/app-instances";
import { heldRefundApprovedAndReadBack, listToolsWith, MemoryProvider } from "../support/oauth";
import { provedFor, STEP_UP_PASSWORD } from "../support/step-up";
import { freePort } from "../../scripts/pg-cluster";
import { createWorld, type World } from "../support/world";
import { ownInstances } from "../support/own-instances";

// MCP authorization on two instances of the production build behind one public address (OAUTH_ISSUER): the MCP
// SDK client's OAuth provider registers (DCR), an agent grants on the consent page's form, the client works on
// both instances, and an admin's revocation from the admin page makes its next call 401 on both. Then the same
// client, and mcp-remote, known by Client ID Metadata Documents that the instances fetch over HTTPS from a server
// of this test (its self-signed certificate trusted through NODE_EXTRA_CA_CERTS, its address listed
// in OUTBOUND_ALLOWED_HOSTS as an operator lists a local receiver), and mcp-remote registering itself.

const tls = mkdtempSync(path.join(tmpdir(), "cimd-tls-"));
const [keyFile, certFile] = [path.join(tls, "key.pem"), path.join(tls, "cert.pem")];
execFileSync(
  "openssl",
  ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"].concat([
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
  ]),
  { stdio: "ignore" },
);
const [documentPort, cimdCallbackPort] = [await freePort(), await freePort()];
const REDIRECT = "http://127.0.0.1:33419/callback";
const documentAt = (path: string) => `https://127.0.0.1:${documentPort}${path}`;
const documentUrl = documentAt("/clients/editor.json");
const runtimeDocumentUrl = documentAt("/clients/runtime.json");
/** The metadata documents this test's HTTPS server publishes, by path. */
const documents: Record<string, { client_name: string; redirect_uris: string[] }> = {
  "/clients/editor.json": {
    client_name: "Editor with a metadata document",
    redirect_uris: [`http://localhost:${cimdCallbackPort}/oauth/callback`],
  },
  "/clients/runtime.json": { client_name: "Runtime with a metadata document", redirect_uris: [REDIRECT] },
};
/**
 * The hosts' own documents (tests/fixtures/cimd), served as they are but at this server's URLs: `client_id` (it must
 * be the URL) and ChatGPT's `jwks_uri`, which serves the public half of a key this test signs assertions with.
 */
const chatgptKeys = await generateKeyPair("RS256");
const hostDocuments: Record<string, string> = {
  "/hosts/chatgpt-jwks.json": JSON.stringify({
    keys: [{ ...(await exportJWK(chatgptKeys.publicKey)), kid: "chatgpt-test", use: "sig", alg: "RS256" }],
  }),
};
const hostDocumentUrl = (name: string) => documentAt(`/hosts/${name}`);
for (const name of ["claude.json", "claude-code.json", "chatgpt.json", "vscode.json", "goose.json"]) {
  const published = JSON.parse(readFileSync(path.join("tests", "fixtures", "cimd", name), "utf8")) as Record<
    string,
    unknown
  >;
  hostDocuments[`/hosts/${name}`] = JSON.stringify({
    ...published,
    client_id: hostDocumentUrl(name),
    ...(published.jwks_uri ? { jwks_uri: documentAt("/hosts/chatgpt-jwks.json") } : {}),
  });
}
hostDocuments["/hosts/unusable.json"] = JSON.stringify({
  client_id: hostDocumentUrl("unusable.json"),
  redirect_uris: ["https://host.example/oauth/callback"],
  token_endpoint_auth_method: "client_secret_basic",
});
const documentsServed: string[] = [];
const documentServer = https.createServer(
  { key: readFileSync(keyFile), cert: readFileSync(certFile) },
  (request, response) => {
    const path = request.url ?? "";
    documentsServed.push(path);
    if (hostDocuments[path]) {
      response.writeHead(200, { "content-type": "application/json" });
      return void response.end(hostDocuments[path]);
    }
    const document = documents[path];
    if (!document) return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        client_id: documentAt(path),
        ...document,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }),
    );
  },
);
await new Promise<void>((resolve) => documentServer.listen(documentPort, "127.0.0.1", resolve));
afterAll(() => new Promise((resolve) => documentServer.close(resolve)));

const instances = ownInstances(2, (urls) => ({
  OAUTH_ISSUER: urls[0],
  NODE_EXTRA_CA_CERTS: certFile,
  OUTBOUND_ALLOWED_HOSTS: `127.0.0.1:${documentPort}`,
}));
let world: World;
let issuer: string;

beforeAll(async () => {
  issuer = instances[0].url;
  world = await createWorld();
});

const transport = (base: string, conversation: string, provider: MemoryProvider) =>
  new StreamableHTTPClientTransport(new URL(`/api/mcp?conversation=${conversation}`, base), { authProvider: provider });

/**
 * The MCP SDK client's OAuth flow with no key: its first connect is refused and names where to sign in, the agent
 * opens the consent page with their session and grants orders:read and refunds:write on its form, and the client
 * finishes with the code it is sent back with. Returns where it was sent, what the consent page said, and the
 * address it came back to.
 */
/** A real session of the world's agent, as the cookie a browser signed in as them holds. */
const agentSessionCookie = (own: World) => personCookie(own.users.agent);

/**
 * The consent form's grant of orders:read and refunds:write as the page posts it, with the step-up the page makes
 * first for refunds:write, in the session the cookie stands for.
 */
async function postGrant(own: World, params: URLSearchParams, agentCookie: string) {
  const form = new URLSearchParams(params);
  form.set("decision", "grant");
  for (const scope of ["orders:read", "refunds:write"]) form.append("scope_choice", scope);
  const session = await db.session.findFirstOrThrow({
    where: { userId: own.users.agent },
    orderBy: { createdAt: "desc" },
  });
  const digest = delegationDigest(form.get("client_id")!, form.get("code_challenge")!);
  const proof = await provedFor(own.users.agent, { kind: "oauth.refunds-delegated", digest }, session.id);
  form.set("step_up_proof", proof.proofId);
  return fetch(`${issuer}/api/oauth/authorize`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: agentCookie, origin: issuer, "content-type": "application/x-www-form-urlencoded" },
    body: form,
  });
}

async function sdkClientThroughConsent(own: World, conversation: string, provider: MemoryProvider) {
  const first = await new Client({ name: "oauth-hardening", version: "1" })
    .connect(transport(issuer, conversation, provider))
    .catch((error: unknown) => error);
  expect(first).toBeInstanceOf(UnauthorizedError);
  const authorizationUrl = provider.authorizationUrl!;
  const agentCookie = await agentSessionCookie(own);
  const page = await fetch(authorizationUrl, { headers: { cookie: agentCookie } });
  expect(page.status).toBe(200);
  const consent = { html: await page.text(), csp: page.headers.get("content-security-policy") };

  const granted = await postGrant(own, authorizationUrl.searchParams, agentCookie);
  expect(granted.status).toBe(303);
  const back = new URL(granted.headers.get("location")!);
  await transport(issuer, conversation, provider).finishAuth(back.searchParams.get("code")!);
  return { authorizationUrl, consent, back };
}

describe("MCP authorization across two instances", () => {
  it("a DCR client authorizes through the consent form, works on both instances, and a revocation ends it on both", async () => {
    await allowSelfRegistration(world);
    const conversation = await conversationOver(issuer, world.keys.agent, world.customers.ana);

    const provider = new MemoryProvider(REDIRECT);
    const { authorizationUrl, consent, back } = await sdkClientThroughConsent(world, conversation, provider);
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${issuer}/oauth/authorize`);
    expect(consent.html).toContain("Test runtime");
    expect(consent.html).toContain("127.0.0.1:33419");
    expect(consent.csp).toContain("form-action 'self' http://127.0.0.1:33419");
    expect(back.searchParams.get("iss")).toBe(issuer);

    const onFirst = new Client({ name: "oauth-hardening", version: "1" });
    await onFirst.connect(transport(instances[0].url, conversation, provider));
    const onSecond = new Client({ name: "oauth-hardening", version: "1" });
    await onSecond.connect(transport(instances[1].url, conversation, provider));
    const held = await onFirst.callTool({
      name: "issue_refund",
      arguments: { order_id: world.orders.o1004, amount_cents: 8000, currency: "USD", reason: "damaged" },
    });
    const callId = (held.structuredContent as { call_id: string; status: string }).call_id;
    expect((held.structuredContent as { status: string }).status).toBe("needs_approval");
    const request = await db.approvalRequest.findFirstOrThrow({ where: { originCallId: callId } });
    expect(
      (
        await approveRequest(
          { userId: world.users.supervisor, tenantId: world.tenantId, role: "SUPERVISOR" },
          request.id,
        )
      ).ok,
    ).toBe(true);
    const read = await onSecond.callTool({ name: "get_call_status", arguments: { call_id: callId } });
    expect(read.structuredContent).toMatchObject({ result: { status: "ok", disposition: "approved-executed" } });
    await onFirst.close();
    await onSecond.close();

    const accessToken = provider.saved!.access_token;
    for (const instance of instances)
      expect((await listToolsWith(fetch, instance.url, conversation, accessToken)).status).toBe(200);
    const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: world.tenantId } });
    const adminCookie = await personCookie(world.users.admin);
    await callAction(instances[1].url, "/admin/policy", "revokeConnectionAction", [{ grantId: grant.id }], adminCookie);
    expect((await db.oAuthGrant.findUniqueOrThrow({ where: { id: grant.id } })).revokedAt).not.toBeNull();
    for (const instance of instances) {
      const refused = await listToolsWith(fetch, instance.url, conversation, accessToken);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    }
    const refreshed = await fetch(`${issuer}/api/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: provider.saved!.refresh_token!,
        client_id: String(provider.client!.client_id),
      }),
    });
    expect(refreshed.status).toBe(400);
  }, 120_000);

  it("the MCP SDK client known by its metadata document, fetched over HTTPS, connects where self-registration is off, and its held refund is approved and read back", async () => {
    const own = await createWorld();
    const conversation = await conversationOver(issuer, own.keys.agent, own.customers.ana);
    const provider = new MemoryProvider(REDIRECT, runtimeDocumentUrl);
    const { authorizationUrl, consent } = await sdkClientThroughConsent(own, conversation, provider);
    expect(authorizationUrl.searchParams.get("client_id")).toBe(runtimeDocumentUrl);
    expect(consent.html).toContain("Runtime with a metadata document");
    expect(consent.html).toContain(runtimeDocumentUrl);
    expect(documentsServed).toContain("/clients/runtime.json");

    const client = new Client({ name: "oauth-hardening", version: "1" });
    await client.connect(transport(instances[1].url, conversation, provider));
    try {
      await heldRefundApprovedAndReadBack(own, client, 6500);
    } finally {
      await client.close();
    }
    const grant = await db.oAuthGrant.findFirstOrThrow({
      where: { tenantId: own.tenantId },
      include: { client: true },
    });
    expect(grant.client).toMatchObject({ kind: "cimd", id: runtimeDocumentUrl });
  }, 120_000);
});

/**
 * mcp-remote as a desktop host starts it, with no key: its browser step (it prints the address, having no desktop)
 * is done by Chromium with the agent's session through the consent page. Returns the connected client and what the
 * consent page said.
 */
async function mcpRemoteThroughConsent(
  own: World,
  conversation: string | null,
  callbackPort: number,
  args: string[] = [],
) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      path.join("node_modules", "mcp-remote", "dist", "proxy.js"),
      conversation === null ? `${issuer}/api/mcp` : `${issuer}/api/mcp?conversation=${conversation}`,
      String(callbackPort),
      "--transport",
      "http-only",
      ...args,
    ],
    env: {
      ...(process.env as Record<string, string>),
      MCP_REMOTE_CONFIG_DIR: mkdtempSync(path.join(tmpdir(), "mcp-remote-")),
      BROWSER: "false",
      DISPLAY: "",
    },
    stderr: "pipe",
  });
  let log = "";
  const authorizationUrl = new Promise<string>((resolve) => {
    transport.stderr!.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      const match = /Please authorize this client by visiting:\s+(\S+)/.exec(log);
      if (match) resolve(match[1]);
    });
  });
  const client = new Client({ name: "stdio-host", version: "1.0.0" });
  const connected = client.connect(transport);

  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic"],
  });
  let consent: string;
  try {
    const context = await browser.newContext();
    const cookie = await agentSessionCookie(own);
    const [name, value] = cookie.split("=");
    await context.addCookies([{ name, value, url: issuer, httpOnly: true, sameSite: "Lax" }]);
    const page = await context.newPage();
    await page.goto(await authorizationUrl);
    consent = await page.getByRole("main").innerText();
    // Proposing refunds passes the agent's refund permission on: the page asks for the password first.
    await db.user.update({
      where: { id: own.users.agent },
      data: { passwordHash: await hashPassword(STEP_UP_PASSWORD) },
    });
    await page.getByTestId("consent-password").fill(STEP_UP_PASSWORD);
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL(new RegExp(`localhost:${callbackPort}/oauth/callback`));
  } finally {
    await browser.close();
  }
  await connected;
  return { client, consent };
}

/** Proposes a refund through `client`, has a supervisor approve it, and reads it back as executed. */
describe("mcp-remote with no pasted key", () => {
  it("registers itself, its browser step is done by Chromium through the consent page, and a held refund is approved and read back", async () => {
    const own = await createWorld();
    await allowSelfRegistration(own);
    const conversation = await conversationOver(issuer, own.keys.agent, own.customers.ana);
    const callbackPort = await freePort();
    const { client, consent } = await mcpRemoteThroughConsent(own, conversation, callbackPort);
    try {
      expect(consent).toContain("Registered itself; its name is not verified");
      await heldRefundApprovedAndReadBack(own, client, 7000);
      const grant = await db.oAuthGrant.findFirstOrThrow({
        where: { tenantId: own.tenantId },
        include: { client: true },
      });
      expect(grant.client.kind).toBe("dcr");
      expect(grant.redirectUri).toBe(`http://localhost:${callbackPort}/oauth/callback`);
    } finally {
      await client.close();
    }
  }, 180_000);

  it("known by its metadata document, fetched over HTTPS by the server, it connects where self-registration is off, and a held refund is approved and read back", async () => {
    const own = await createWorld();
    const conversation = await conversationOver(issuer, own.keys.agent, own.customers.ana);
    const { client, consent } = await mcpRemoteThroughConsent(own, conversation, cimdCallbackPort, [
      "--client-metadata-url",
      documentUrl,
    ]);
    try {
      expect(consent).toContain("Editor with a metadata document");
      expect(consent).toContain(documentUrl);
      expect(documentsServed).toContain("/clients/editor.json");
      await heldRefundApprovedAndReadBack(own, client, 6000);
      const grant = await db.oAuthGrant.findFirstOrThrow({
        where: { tenantId: own.tenantId },
        include: { client: true },
      });
      expect(grant.client).toMatchObject({ kind: "cimd", id: documentUrl, name: "Editor with a metadata document" });
      expect(grant.redirectUri).toBe(`http://localhost:${cimdCallbackPort}/oauth/callback`);
      expect(await db.oAuthClient.count({ where: { kind: "dcr", redirectUris: { has: grant.redirectUri } } })).toBe(0);
    } finally {
      await client.close();
    }
  }, 180_000);
});

/** The agent, in Chromium on the Connections page, points their one connection at a customer (issue 40). */
async function workOnInBrowser(own: World, customer: keyof World["customers"]) {
  const { email } = await db.customer.findUniqueOrThrow({ where: { id: own.customers[customer] } });
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic"],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const cookie = await agentSessionCookie(own);
    const [name, value] = cookie.split("=");
    await context.addCookies([{ name, value, url: issuer, httpOnly: true, sameSite: "Lax" }]);
    const page = await context.newPage();
    await page.goto(`${issuer}/connections`);
    const card = page.getByTestId("connection");
    await card.getByRole("searchbox", { name: "Switch to a customer" }).fill(email.slice(0, 3));
    await card.getByRole("button", { name: `Work on ${email}` }).click();
    await card
      .getByTestId("working-on")
      .filter({ hasText: `Working on ${email}` })
      .waitFor({ timeout: 15_000 });
  } finally {
    await browser.close();
  }
}

describe("one mcp-remote connection, many customers", () => {
  it("the bare URL connects once; the person switches to ana in Chromium and her refund is held, approved and read back; then to ben, whose order reads while ana's is not found", async () => {
    const own = await createWorld();
    const { client } = await mcpRemoteThroughConsent(own, null, cimdCallbackPort, [
      "--client-metadata-url",
      documentUrl,
    ]);
    try {
      const waiting = await client.callTool({ name: "get_order", arguments: { order_id: own.orders.o1004 } });
      expect(waiting.isError).toBe(true);
      expect(JSON.stringify(waiting.content)).toContain(`${issuer}/connections`);
      const asked = await client.callTool({ name: "request_customer_switch", arguments: {} });
      expect(JSON.stringify(asked.content)).toContain(`${issuer}/connections`);

      await workOnInBrowser(own, "ana");
      await heldRefundApprovedAndReadBack(own, client, 6500);

      await workOnInBrowser(own, "ben");
      const ben = await client.callTool({ name: "get_order", arguments: { order_id: own.orders.o1002 } });
      expect(ben.structuredContent).toMatchObject({ status: "ok" });
      const ana = await client.callTool({
        name: "issue_refund",
        arguments: { order_id: own.orders.o1004, amount_cents: 500, currency: "USD", reason: "damaged" },
      });
      expect(ana.structuredContent).toMatchObject({ status: "not_found" });
      expect((await db.refund.findMany({ where: { orderId: own.orders.o1004 } })).map((r) => r.amountCents)).toEqual([
        6500,
      ]);
      const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: own.tenantId } });
      const switches = await db.auditLog.count({
        where: { tenantId: own.tenantId, action: "connection.customer-switched", actorId: own.users.agent },
      });
      expect({ grant: grant.workingConversationId !== null, switches }).toEqual({ grant: true, switches: 2 });
    } finally {
      await client.close();
    }
  }, 180_000);
});

/** ChatGPT's client assertion (RFC 7523) for this deployment's token endpoint, signed by the key its jwks_uri serves. */
const chatgptAssertion = () =>
  new SignJWT({})
    .setProtectedHeader({ alg: "RS256", kid: "chatgpt-test" })
    .setIssuer(hostDocumentUrl("chatgpt.json"))
    .setSubject(hostDocumentUrl("chatgpt.json"))
    .setAudience(`${issuer}/api/oauth/token`)
    .setIssuedAt()
    .setExpirationTime("60s")
    .setJti(crypto.randomUUID())
    .sign(chatgptKeys.privateKey);

describe("the hosts' published metadata documents, fetched over HTTPS by the production build", () => {
  // As each host connects: its redirect URI (a loopback one on the port it got) and its token authentication.
  for (const [name, redirectUri] of [
    ["claude.json", "https://claude.ai/api/mcp/auth_callback"],
    ["claude-code.json", "http://localhost:49153/callback"],
    ["chatgpt.json", "https://chatgpt.com/connector_platform_oauth_redirect"],
    ["vscode.json", "http://127.0.0.1:33418/"],
    ["goose.json", "http://localhost:51235/oauth_callback"],
  ] as const) {
    it(`${name}: consent, code at its redirect URI, token as it authenticates, and a held refund approved and read back`, async () => {
      const own = await createWorld();
      const conversation = await conversationOver(issuer, own.keys.agent, own.customers.ana);
      const clientId = hostDocumentUrl(name);
      const authorization = new URL(`${issuer}/oauth/authorize`);
      for (const [key, value] of Object.entries({
        response_type: "code",
        client_id: clientId,
        redirect_uri: redirectUri,
        code_challenge: "WrHlyGZTXKrfARMf6ggFndo_BRsga1GAB6KE6asQmhk",
        code_challenge_method: "S256",
        state: "host-state",
        resource: `${issuer}/api/mcp`,
        scope: "orders:read refunds:write",
      }))
        authorization.searchParams.set(key, value);
      const agentCookie = await agentSessionCookie(own);
      const page = await fetch(authorization, { headers: { cookie: agentCookie } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(clientId);
      expect(documentsServed).toContain(`/hosts/${name}`);

      const granted = await postGrant(own, authorization.searchParams, agentCookie);
      expect(granted.status).toBe(303);
      const back = new URL(granted.headers.get("location")!);
      expect(back.href.startsWith(redirectUri)).toBe(true);
      const exchange = new URLSearchParams({
        grant_type: "authorization_code",
        code: back.searchParams.get("code")!,
        client_id: clientId,
        redirect_uri: redirectUri,
        code_verifier: "dBjftJeZ4CVP-mJ92K9Y8-k1Y9mH2Uh5sR9V9t9Jj1gXk",
      });
      if (name === "chatgpt.json") {
        exchange.set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
        exchange.set("client_assertion", await chatgptAssertion());
      }
      const issued = await fetch(`${instances[1].url}/api/oauth/token`, { method: "POST", body: exchange });
      expect(issued.status).toBe(200);
      const { access_token: accessToken } = (await issued.json()) as { access_token: string };
      if (name === "chatgpt.json") {
        expect(documentsServed).toContain("/hosts/chatgpt-jwks.json");
        const replayed = await fetch(`${instances[0].url}/api/oauth/token`, { method: "POST", body: exchange });
        expect(replayed.status).toBe(401);
      }

      const client = new Client({ name: "host", version: "1" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`/api/mcp?conversation=${conversation}`, instances[0].url), {
          requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
        }),
      );
      try {
        await heldRefundApprovedAndReadBack(own, client, 5500);
      } finally {
        await client.close();
      }
    }, 120_000);
  }

  it("a document that cannot be used sends the browser back to its own redirect URI with unauthorized_client", async () => {
    const own = await createWorld();
    const authorization = new URL(`${issuer}/oauth/authorize`);
    for (const [key, value] of Object.entries({
      response_type: "code",
      client_id: hostDocumentUrl("unusable.json"),
      redirect_uri: "https://host.example/oauth/callback",
      code_challenge: "WrHlyGZTXKrfARMf6ggFndo_BRsga1GAB6KE6asQmhk",
      code_challenge_method: "S256",
      state: "host-state",
    }))
      authorization.searchParams.set(key, value);
    const agentCookie = await agentSessionCookie(own);
    const page = await fetch(authorization, { headers: { cookie: agentCookie }, redirect: "manual" });
    expect([303, 307]).toContain(page.status);
    const back = new URL(page.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe("https://host.example/oauth/callback");
    expect([back.searchParams.get("error"), back.searchParams.get("state")]).toEqual([
      "unauthorized_client",
      "host-state",
    ]);
  }, 60_000);
});
