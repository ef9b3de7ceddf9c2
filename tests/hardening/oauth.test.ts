import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { chromium } from "@playwright/test";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decide";
import { db } from "@/lib/db";
import { setSelfRegistration } from "@/lib/oauth/connections";
import { callAction, sessionCookie, startInstance, type AppInstance } from "../support/app-instances";
import { MemoryProvider } from "../support/oauth";
import { freePort } from "../../scripts/pg-cluster";
import { createWorld, type World } from "../support/world";

// MCP authorization on two instances of the production build behind one public address (OAUTH_ISSUER): the MCP
// SDK client's OAuth provider registers (DCR), an agent grants on the consent page's form, the client works on
// both instances, and an admin's revocation from the admin page makes its next call 401 on both.

let instances: AppInstance[] = [];
let world: World;
let issuer: string;
const REDIRECT = "http://127.0.0.1:33419/callback";

beforeAll(async () => {
  const ports = [await freePort(), await freePort()];
  issuer = `http://127.0.0.1:${ports[0]}`;
  const env = { DATABASE_URL: process.env.DATABASE_URL!, OAUTH_ISSUER: issuer };
  instances = await Promise.all(ports.map((port) => startInstance(port, env)));
  world = await createWorld();
}, 120_000);

afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
});

const transport = (base: string, conversation: string, provider: MemoryProvider) =>
  new StreamableHTTPClientTransport(new URL(`/api/mcp?conversation=${conversation}`, base), { authProvider: provider });

const listTools = (base: string, conversation: string, accessToken: string) =>
  fetch(`${base}/api/mcp?conversation=${conversation}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${accessToken}`,
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });

describe("MCP authorization across two instances", () => {
  it("a DCR client authorizes through the consent form, works on both instances, and a revocation ends it on both", async () => {
    await setSelfRegistration({ id: world.users.admin, tenantId: world.tenantId }, true);
    const conversation = (
      (await (
        await fetch(`${issuer}/api/v1/conversations`, {
          method: "POST",
          headers: { authorization: `Bearer ${world.keys.agent}` },
          body: JSON.stringify({ customer_id: world.customers.ana }),
        })
      ).json()) as { id: string }
    ).id;

    const provider = new MemoryProvider(REDIRECT);
    const first = await new Client({ name: "oauth-hardening", version: "1" })
      .connect(transport(issuer, conversation, provider))
      .catch((error: unknown) => error);
    expect(first).toBeInstanceOf(UnauthorizedError);
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${issuer}/oauth/authorize`);

    const agentCookie = await sessionCookie({
      id: world.users.agent,
      role: "AGENT",
      tenantId: world.tenantId,
      email: "agent",
    });
    const page = await fetch(authorizationUrl, { headers: { cookie: agentCookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Test runtime");
    expect(html).toContain("127.0.0.1:33419");
    expect(page.headers.get("content-security-policy")).toContain("form-action 'self' http://127.0.0.1:33419");

    const form = new URLSearchParams(authorizationUrl.searchParams);
    form.set("decision", "grant");
    for (const scope of ["orders:read", "refunds:write"]) form.append("scope_choice", scope);
    const granted = await fetch(`${issuer}/api/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: agentCookie, origin: issuer, "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    expect(granted.status).toBe(303);
    const back = new URL(granted.headers.get("location")!);
    expect(back.searchParams.get("iss")).toBe(issuer);
    await transport(issuer, conversation, provider).finishAuth(back.searchParams.get("code")!);

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
      expect((await listTools(instance.url, conversation, accessToken)).status).toBe(200);
    const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: world.tenantId } });
    const adminCookie = await sessionCookie({
      id: world.users.admin,
      role: "ADMIN",
      tenantId: world.tenantId,
      email: "admin",
    });
    await callAction(instances[1].url, "/admin/policy", "revokeConnectionAction", [{ grantId: grant.id }], adminCookie);
    expect((await db.oAuthGrant.findUniqueOrThrow({ where: { id: grant.id } })).revokedAt).not.toBeNull();
    for (const instance of instances) {
      const refused = await listTools(instance.url, conversation, accessToken);
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
});

describe("mcp-remote with no pasted key", () => {
  it("registers itself, its browser step is done by Chromium through the consent page, and a held refund is approved and read back", async () => {
    const own = await createWorld();
    await setSelfRegistration({ id: own.users.admin, tenantId: own.tenantId }, true);
    const conversation = (
      (await (
        await fetch(`${issuer}/api/v1/conversations`, {
          method: "POST",
          headers: { authorization: `Bearer ${own.keys.agent}` },
          body: JSON.stringify({ customer_id: own.customers.ana }),
        })
      ).json()) as { id: string }
    ).id;
    const callbackPort = await freePort();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        path.join("node_modules", "mcp-remote", "dist", "proxy.js"),
        `${issuer}/api/mcp?conversation=${conversation}`,
        String(callbackPort),
        "--transport",
        "http-only",
      ],
      env: {
        ...(process.env as Record<string, string>),
        MCP_REMOTE_CONFIG_DIR: mkdtempSync(path.join(tmpdir(), "mcp-remote-")),
        // No desktop to open a browser on: mcp-remote prints the address, and Chromium below opens it.
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
    try {
      const context = await browser.newContext();
      const cookie = await sessionCookie({
        id: own.users.agent,
        role: "AGENT",
        tenantId: own.tenantId,
        email: "agent",
      });
      const [name, value] = cookie.split("=");
      await context.addCookies([{ name, value, url: issuer, httpOnly: true, sameSite: "Lax" }]);
      const page = await context.newPage();
      await page.goto(await authorizationUrl);
      await page.getByRole("button", { name: "Allow" }).click();
      await page.waitForURL(new RegExp(`localhost:${callbackPort}/oauth/callback`));
    } finally {
      await browser.close();
    }
    await connected;
    try {
      const held = await client.callTool({
        name: "issue_refund",
        arguments: { order_id: own.orders.o1004, amount_cents: 7000, currency: "USD", reason: "damaged" },
      });
      const callId = (held.structuredContent as { call_id: string }).call_id;
      expect(held.structuredContent).toMatchObject({ status: "needs_approval" });
      const request = await db.approvalRequest.findFirstOrThrow({ where: { originCallId: callId } });
      expect(
        (await approveRequest({ userId: own.users.supervisor, tenantId: own.tenantId, role: "SUPERVISOR" }, request.id))
          .ok,
      ).toBe(true);
      const read = await client.callTool({ name: "get_call_status", arguments: { call_id: callId } });
      expect(read.structuredContent).toMatchObject({ result: { status: "ok", disposition: "approved-executed" } });
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
});
