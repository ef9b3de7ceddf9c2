import http from "node:http";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { callAction, sessionCookie, type AppInstance } from "../support/app-instances";
import { createWorld, effectSnapshot, type World } from "../support/world";
import { ownInstances } from "../support/own-instances";

// The production build as a browser and an attacker meet it: security headers on every answer, hostile
// request targets, cookies and server-action input answered 4xx with a code, nothing logged, nothing changed.

// The second instance is reached over plain HTTP here but configured as served over HTTPS (TLS ends at a proxy).
const [app, https] = ownInstances(2, (_urls, index): Record<string, string> =>
  index === 1 ? { NEXTAUTH_URL: "https://toolgate.example" } : {},
);
let world: World;

beforeAll(async () => {
  world = await createWorld();
});

const logged = (instance: AppInstance) =>
  instance
    .output()
    .split("\n")
    .filter((line) => /"level":"error"|⨯|\[next-auth\]\[error\]|\bat .*\.js:\d+/.test(line));

describe("security headers", () => {
  it("every page carries a CSP with a fresh nonce that is on its scripts, and the framing, sniffing, referrer and feature headers", async () => {
    const [first, second] = await Promise.all([fetch(`${app.url}/login`), fetch(`${app.url}/login`)]);
    const policy = first.headers.get("content-security-policy") ?? "";
    const nonce = /'nonce-([^']+)'/.exec(policy)?.[1];
    expect(nonce).toBeTruthy();
    expect(second.headers.get("content-security-policy")).not.toContain(nonce);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("'strict-dynamic'");
    expect(policy).not.toContain("unsafe-eval");
    const html = await first.text();
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((match) => match[0]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
    expect(
      Object.fromEntries(
        ["x-frame-options", "x-content-type-options", "referrer-policy"].map((name) => [name, first.headers.get(name)]),
      ),
    ).toEqual({
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    });
    expect(first.headers.get("permissions-policy")).toContain("camera=()");
    expect(first.headers.get("strict-transport-security")).toBeNull();
  });

  it("API answers, errors, files and not-found pages carry them too", async () => {
    const css = /href="(\/_next\/static\/[^"]+\.css)"/.exec(await (await fetch(`${app.url}/login`)).text())?.[1];
    for (const path of [
      "/api/v1/conversations",
      "/api/auth/session",
      "/api/mcp",
      "/no-such-page",
      "/api/v1/tool-calls/x",
      css!,
    ]) {
      const response = await fetch(`${app.url}${path}`);
      expect([path, response.headers.get("x-frame-options"), response.headers.get("x-content-type-options")]).toEqual([
        path,
        "DENY",
        "nosniff",
      ]);
      if (path.startsWith("/api/"))
        expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    }
  });

  it("served over HTTPS: HSTS on every answer and __Host- cookies", async () => {
    const page = await fetch(`${https.url}/login`);
    expect(page.headers.get("strict-transport-security")).toMatch(/^max-age=\d{8,}/);
    expect(page.headers.get("content-security-policy")).toContain("upgrade-insecure-requests");
    // The REST API's answers too, though its well-formed paths skip the proxy (decision 032).
    for (const [path, method] of [
      ["/api/v1/conversations", "POST"],
      ["/api/v1/tool-calls/call_x", "GET"],
      ["/api/v1/tool-calls/%ff", "GET"],
    ]) {
      const answer = await fetch(`${https.url}${path}`, { method });
      expect([path, answer.status, answer.headers.get("strict-transport-security")]).toEqual([
        path,
        expect.any(Number),
        expect.stringMatching(/^max-age=/),
      ]);
    }
    const csrf = await fetch(`${https.url}/api/auth/csrf`);
    const cookies = csrf.headers.getSetCookie();
    expect(cookies.length).toBeGreaterThan(0);
    for (const cookie of cookies) expect(cookie).toMatch(/^__Host-[^;]+;.*Path=\/.*; Secure/i);
  });
});

describe("hostile requests", () => {
  const targets = [
    "/api/v1/tool-calls/%ff",
    "/api/v1/tool-calls/%00",
    "/api/v1/conversations/%ff/tools",
    "/api/v1/conversations/a%00/tool-calls",
    "/api/mcp?conversation=%00",
    "/api/conversations/%ff/events",
    "/api/auth/%ff",
    "/conversations/%00",
    "/conversations/%ed%a0%80",
    "/approvals?after=%00",
    "/admin/policy%ff",
  ];
  it.each(targets)("%s is 400 request.malformed-url", async (target) => {
    for (const method of ["GET", "POST"]) {
      const response = await fetch(`${app.url}${target}`, { method, body: method === "POST" ? "{}" : undefined });
      expect([method, response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([
        method,
        400,
        "request.malformed-url",
      ]);
    }
  });

  it("the REST API's paths that skip the proxy refuse a malformed query and ignore a server-action header", async () => {
    const before = logged(app).length;
    const query = await fetch(`${app.url}/api/v1/tool-calls/call_x?wait=%00`);
    expect([query.status, ((await query.json()) as { error: { code: string } }).error.code]).toEqual([
      400,
      "request.malformed-url",
    ]);
    const action = await fetch(`${app.url}/api/v1/conversations`, {
      method: "POST",
      headers: { "next-action": "0".repeat(42), origin: "https://evil.example" },
      body: "[]",
    });
    expect(action.status).toBe(401);
    // A raw dot segment (a browser resolves it before sending; a script need not) still goes through the proxy: the
    // page it names gets its nonce, and a server action its origin check.
    const raw = (method: string, path: string, headers: Record<string, string> = {}) =>
      new Promise<http.IncomingMessage>((resolve, reject) => {
        const { hostname, port } = new URL(app.url);
        const request = http.request({ hostname, port, method, path, headers }, (response) => {
          response.resume();
          resolve(response);
        });
        request.on("error", reject);
        request.end(method === "POST" ? "[]" : undefined);
      });
    const page = await raw("GET", "/api/v1/../../login");
    expect([page.statusCode, page.headers["content-security-policy"]]).toEqual([
      200,
      expect.stringContaining("'nonce-"),
    ]);
    const dotted = await raw("POST", "/api/v1/../../approvals", {
      "next-action": "0".repeat(42),
      origin: "https://evil.example",
    });
    expect(dotted.statusCode).toBe(403);
    expect(logged(app).slice(before)).toEqual([]);
  });

  it("a server action from another site is 403 origin.forbidden, not a 500", async () => {
    const before = logged(app).length;
    for (const origin of ["https://evil.example", "null-ish", "http://127.0.0.1:3442.evil.example"]) {
      const response = await fetch(`${app.url}/approvals`, {
        method: "POST",
        headers: { "next-action": "0".repeat(42), origin },
        body: "[]",
      });
      expect([origin, response.status]).toEqual([origin, 403]);
    }
    // On a path under /api/v1 that names no route (Next.js renders its not-found page there, which takes actions),
    // with a forwarded host that would make the origin look like the app's own.
    const forwarded: Record<string, string>[] = [{}, { "x-forwarded-host": "evil.example" }];
    for (const headers of forwarded) {
      const response = await fetch(`${app.url}/api/v1/x`, {
        method: "POST",
        headers: { "next-action": "0".repeat(42), origin: "https://evil.example", ...headers },
        body: "[]",
      });
      expect([headers, response.status]).toEqual([headers, 403]);
    }
    // A form posted from another site names its action in its fields instead of a header.
    const form = new FormData();
    form.set(`$ACTION_ID_${"0".repeat(42)}`, "");
    const posted = await fetch(`${app.url}/approvals`, {
      method: "POST",
      headers: { origin: "https://evil.example" },
      body: form,
    });
    expect(posted.status).toBe(403);
    expect(logged(app).slice(before)).toEqual([]);
  });

  it("sign-in with a body next-auth cannot read is 415, a broken session cookie reads as signed out, and neither logs a stack", async () => {
    const before = logged(app).length;
    const json = await fetch(`${app.url}/api/auth/callback/credentials`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{bad",
    });
    expect(json.status).toBe(415);
    for (const cookie of [
      "next-auth.session-token=garbage",
      `next-auth.session-token=${"x".repeat(3000)}`,
      "next-auth.session-token=%ff%00",
    ]) {
      const page = await fetch(`${app.url}/approvals`, { headers: { cookie }, redirect: "manual" });
      expect([cookie.slice(0, 30), page.status, page.headers.get("location")]).toEqual([
        cookie.slice(0, 30),
        307,
        "/login?next=%2Fapprovals",
      ]);
    }
    expect(logged(app).slice(before)).toEqual([]);
  });

  it("an oversized body is refused with Connection: close, and the next request on a kept-alive agent still gets its answer", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, body?: Buffer) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
        const request = http.request(
          `${app.url}${path}`,
          { method, agent, headers: { authorization: `Bearer ${world.keys.agent}` } },
          (response) => {
            let text = "";
            response.on("data", (chunk) => (text += chunk));
            response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, text }));
          },
        );
        request.on("error", reject);
        request.end(body);
      });
    const conversation = (
      (await (
        await fetch(`${app.url}/api/v1/conversations`, {
          method: "POST",
          headers: { authorization: `Bearer ${world.keys.agent}` },
          body: JSON.stringify({ customer_id: world.customers.ana }),
        })
      ).json()) as { id: string }
    ).id;
    for (let round = 0; round < 3; round++) {
      const big = await send("POST", `/api/v1/conversations/${conversation}/tool-calls`, Buffer.alloc(200_000, 0x61));
      expect([big.status, JSON.parse(big.text).code, big.headers.connection]).toEqual([
        200,
        "parse.too-large",
        "close",
      ]);
      const next = await send("GET", `/api/v1/conversations/${conversation}/tools`);
      expect(next.status).toBe(200);
    }
    agent.destroy();
  });
});

describe("server actions with generated ids and text", () => {
  it("never answer host.error, log nothing and change nothing", async () => {
    const people = {
      supervisor: await sessionCookie({
        id: world.users.supervisor,
        role: "SUPERVISOR",
        tenantId: world.tenantId,
        email: "s@acme.test",
      }),
      admin: await sessionCookie({
        id: world.users.admin,
        role: "ADMIN",
        tenantId: world.tenantId,
        email: "a@acme.test",
      }),
      agent: await sessionCookie({
        id: world.users.agent,
        role: "AGENT",
        tenantId: world.tenantId,
        email: "g@acme.test",
      }),
    };
    const keysBefore = await db.apiKey.findMany({ where: { tenantId: world.tenantId }, orderBy: { id: "asc" } });
    const before = await effectSnapshot(world);
    const outputBefore = logged(app).length;
    const ids = fc.oneof(
      fc.constantFrom(
        "\u0000",
        "a\u0000",
        "\ud800",
        "%00",
        "",
        "x".repeat(5000),
        world.users.agent,
        world.customers.ana,
      ),
      fc.string({ unit: "binary", maxLength: 30 }),
    );
    await fc.assert(
      fc.asyncProperty(ids, fc.string({ unit: "binary", maxLength: 60 }), async (id, text) => {
        const answers = await Promise.all([
          callAction(
            app.url,
            "/approvals",
            "decideApprovalsAction",
            [{ ids: [id], decision: "deny", reason: text }],
            people.supervisor,
          ),
          callAction(
            app.url,
            "/approvals",
            "decideApprovalsAction",
            [{ ids: [id], decision: "approve" }],
            people.supervisor,
          ),
          callAction(app.url, "/admin/policy", "revokeKeyAction", [{ keyId: id }], people.admin),
          callAction(app.url, "/admin/policy", "createKeyAction", [{ userId: id }], people.admin),
          callAction(
            app.url,
            "/conversations",
            "openConversationAction",
            [{ customer_id: id, order_id: id }],
            people.agent,
          ),
          callAction(
            app.url,
            "/conversations",
            "proposeAction",
            [{ conversationId: id, envelope: text, callKey: id }],
            people.agent,
          ),
        ]);
        for (const answer of answers) expect(answer).not.toContain("host.error");
      }),
      { seed: Number(process.env.FUZZ_SEED ?? 1515), numRuns: 25 },
    );
    expect(logged(app).slice(outputBefore)).toEqual([]);
    expect(await db.apiKey.findMany({ where: { tenantId: world.tenantId }, orderBy: { id: "asc" } })).toEqual(
      keysBefore,
    );
    const after = await effectSnapshot(world);
    expect({ ...after, conversations: undefined }).toEqual({ ...before, conversations: undefined });
  });
});
