import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { csrfOf } from "../support/api-over-http";
import { callAction, INSTANCE_METRICS_TOKEN, personCookie, startInstance } from "../support/app-instances";
import { freePort } from "../../scripts/pg-cluster";
import { createWorld, type World } from "../support/world";
import { ownInstances } from "../support/own-instances";

// Smaller exposures, each tried against the production build as an outsider or a signed-in browser would: metrics
// without a token, a live stream that outlives its session, opening conversations from the browser without limit,
// and an endless body to the REST open route.

const [app] = ownInstances(1);
let world: World;

beforeAll(async () => {
  world = await createWorld({ rateOpenPerMin: 3 });
});

const person = (user: keyof World["users"], role: "AGENT" | "SUPERVISOR" | "ADMIN") =>
  personCookie(world.users[user], role);

describe("webhook", () => {
  it("an admin's save of a webhook at an internal address is refused by the action, storing and auditing nothing", async () => {
    const cookie = await person("admin", "ADMIN");
    for (const url of ["http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:5432/", "http://[::1]/"]) {
      const answer = await callAction(
        app.url,
        "/admin/policy",
        "setWebhookAction",
        [{ url, secret: "whsec_0123456789abcdef" }],
        cookie,
      );
      expect([url, answer]).toEqual([url, expect.stringContaining('"code":"outbound.forbidden-address"')]);
    }
    const tenant = await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } });
    expect(tenant.webhookUrl).toBeNull();
    expect(await db.auditLog.count({ where: { tenantId: world.tenantId, action: "webhook.set" } })).toBe(0);
  }, 30_000);
});

describe("metrics", () => {
  it("a production start without METRICS_TOKEN, AUDIT_SEAL_KEY or NEXTAUTH_URL refuses to start, naming it; with them, a scrape without the token is 401", async () => {
    const port = await freePort();
    const refused = startInstance(port, { DATABASE_URL: process.env.DATABASE_URL!, METRICS_TOKEN: "" });
    await expect(refused).rejects.toThrow(/METRICS_TOKEN: required in production/);
    const unsealed = startInstance(port, { DATABASE_URL: process.env.DATABASE_URL!, AUDIT_SEAL_KEY: "" });
    await expect(unsealed).rejects.toThrow(/AUDIT_SEAL_KEY: required in production/);
    const addressless = startInstance(port, { DATABASE_URL: process.env.DATABASE_URL!, NEXTAUTH_URL: "" });
    await expect(addressless).rejects.toThrow(/NEXTAUTH_URL: required in production/);
    const anonymous = await fetch(`${app.url}/api/metrics`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toContain("toolgate_");
    const scraped = await fetch(`${app.url}/api/metrics`, {
      headers: { authorization: `Bearer ${INSTANCE_METRICS_TOKEN}` },
    });
    expect(scraped.status).toBe(200);
  }, 90_000);
});

describe("live streams", () => {
  it("the supervisors' queue stream closes within seconds once the session is signed out", async () => {
    const cookie = await person("supervisor", "SUPERVISOR");
    const response = await fetch(`${app.url}/api/approvals/events`, { headers: { cookie } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    const { csrfToken, cookie: withCsrf } = await csrfOf(app.url, cookie);
    const signedOut = await fetch(`${app.url}/api/auth/signout`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: withCsrf },
      body: new URLSearchParams({ csrfToken, json: "true" }),
    });
    expect(signedOut.status).toBeLessThan(400);
    const started = Date.now();
    for (;;) {
      const next = await Promise.race([
        reader.read(),
        new Promise<"open">((resolve) => setTimeout(() => resolve("open"), 8000)),
      ]);
      expect(next).not.toBe("open");
      if (next !== "open" && next.done) break;
    }
    expect(Date.now() - started).toBeLessThan(4000);
    expect((await fetch(`${app.url}/api/approvals/events`, { headers: { cookie } })).status).toBe(401);
  }, 30_000);
});

describe("opening conversations", () => {
  it("the browser's open action is limited like an API key: past rateOpenPerMin it opens nothing", async () => {
    const cookie = await person("agent", "AGENT");
    const answers: string[] = [];
    for (let attempt = 0; attempt < 5; attempt++)
      answers.push(
        await callAction(
          app.url,
          "/conversations",
          "openConversationAction",
          [{ customer_id: world.customers.ana }],
          cookie,
        ),
      );
    expect(answers.slice(0, 3).every((answer) => answer.includes('"ok":true'))).toBe(true);
    for (const answer of answers.slice(3)) expect(answer).toContain('"code":"rate.limited"');
    expect(await db.conversation.count({ where: { agentId: world.users.agent } })).toBe(3);
  }, 30_000);

  it("the REST open route reads no more than its limit: a huge body is 413 request.too-large, nothing opened", async () => {
    const before = await db.conversation.count({ where: { agentId: world.users.agent2 } });
    const huge = JSON.stringify({ customer_id: world.customers.ana, padding: "x".repeat(4 * 1024 * 1024) });
    const response = await fetch(`${app.url}/api/v1/conversations`, {
      method: "POST",
      headers: { authorization: `Bearer ${world.keys.agent2}`, "content-type": "application/json" },
      body: huge,
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: "request.too-large" } });
    expect(await db.conversation.count({ where: { agentId: world.users.agent2 } })).toBe(before);
  }, 30_000);
});
