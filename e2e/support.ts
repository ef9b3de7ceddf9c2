import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { APIRequestContext, Browser, BrowserContext, BrowserContextOptions, Page } from "@playwright/test";
import pg from "pg";
import { mintSession, type SessionPerson } from "../tests/support/session-token";

// Fixtures for the browser tests: a real session cookie minted with the server's secret (no clicking through
// a login form in every test), the seeded API keys, and a direct database handle for asserting effects.

export const SEEDED = {
  agent: { id: "usr_acme_agent", email: "agent@acme.test", role: "AGENT", tenantId: "acme" },
  supervisor: { id: "usr_acme_supervisor", email: "supervisor@acme.test", role: "SUPERVISOR", tenantId: "acme" },
  admin: { id: "usr_acme_admin", email: "admin@acme.test", role: "ADMIN", tenantId: "acme" },
  globexAgent: { id: "usr_globex_agent", email: "agent@globex.test", role: "AGENT", tenantId: "globex" },
  globexSupervisor: {
    id: "usr_globex_supervisor",
    email: "supervisor@globex.test",
    role: "SUPERVISOR",
    tenantId: "globex",
  },
} as const;

export type SeededUser = (typeof SEEDED)[keyof typeof SEEDED];
export type { SessionPerson };

/** A real session: its row in the database and the cookie that stands for it, as a sign-in makes them. */
export async function signInAs(context: BrowserContext, user: SessionPerson, baseURL: string): Promise<void> {
  const token = await mintSession(
    { ...user, name: user.email },
    {
      secret: process.env.E2E_NEXTAUTH_SECRET ?? "e2e-only-secret-not-for-production",
      sessionId: `ses_e2e_${randomBytes(12).toString("base64url")}`,
      saveRow: ({ id, userId, tenantId }) =>
        database().query(`INSERT INTO "Session" ("id", "userId", "tenantId") VALUES ($1, $2, $3)`, [
          id,
          userId,
          tenantId,
        ]),
    },
  );
  await context.addCookies([
    { name: "next-auth.session-token", value: token, url: baseURL, httpOnly: true, sameSite: "Lax" },
  ]);
}

export function apiKey(email: string): string {
  const keys = JSON.parse(readFileSync(path.join(".toolgate", "e2e-keys.json"), "utf8")) as Record<string, string>;
  const key = keys[email];
  if (!key) throw new Error(`no seeded key for ${email}`);
  return key;
}

/** The fake payment provider the server under test pays through (scripts/e2e-server.ts). */
export const provider = {
  url: () => (JSON.parse(readFileSync(path.join(".toolgate", "e2e-provider.json"), "utf8")) as { url: string }).url,
  /** Cents it refunded, per order: what the books are compared with. */
  async totalsByOrder(): Promise<Record<string, number>> {
    const response = await fetch(new URL("/_stats", provider.url()));
    return ((await response.json()) as { totalsByOrder: Record<string, number> }).totalsByOrder;
  },
  /** Faults its next refund requests meet, one each (scripts/dev/fake-provider.ts); an empty list clears them. */
  async queueFaults(modes: string[]): Promise<void> {
    await fetch(new URL("/_faults", provider.url()), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ faults: modes.map((mode) => ({ mode })), clear: true }),
    });
  },
};

let pool: pg.Pool | null = null;
export function database(): pg.Pool {
  pool ??= new pg.Pool({ connectionString: process.env.E2E_DATABASE_URL, max: 2 });
  return pool;
}

/** A new browser context signed in as `person` (with `options`, a viewport say) and a page in it. */
export async function signedInPage(
  browser: Browser,
  person: SessionPerson,
  baseURL: string,
  options?: BrowserContextOptions,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options);
  await signInAs(context, person, baseURL);
  return { context, page: await context.newPage() };
}

export async function openConversation(
  request: APIRequestContext,
  email: string,
  body: Record<string, unknown>,
): Promise<string> {
  const response = await request.post("/api/v1/conversations", {
    headers: { authorization: `Bearer ${apiKey(email)}` },
    data: body,
  });
  if (response.status() !== 201) throw new Error(`open conversation: ${response.status()} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

export async function propose(
  request: APIRequestContext,
  email: string,
  conversation: string,
  envelope: unknown,
  callKey: string,
) {
  const response = await request.post(`/api/v1/conversations/${conversation}/tool-calls`, {
    headers: {
      authorization: `Bearer ${apiKey(email)}`,
      "idempotency-key": callKey,
      "content-type": "application/json",
    },
    data: JSON.stringify(envelope),
  });
  return (await response.json()) as { id: string; kind: string; code: string; approval?: { id: string } };
}

export const refund = (order: string, amount: number, currency = "USD") => ({
  name: "issue_refund",
  arguments: { order_id: order, amount_cents: amount, currency, reason: "damaged" },
});
