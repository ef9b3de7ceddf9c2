import { randomInt } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, type Page } from "@playwright/test";
import AxeBuilder from "@axe-core/playwright";
import type { APIRequestContext } from "@playwright/test";
import { readableText } from "../scripts/dev/smtp-sink";
import { database, openConversation, propose, refund, SEEDED } from "./support";

// Fixtures of the approval-desk specs: rows of their own (so runs and specs never share an order's refunds),
// the link an approval email carries, and the checks every page must pass at every width.

export const VIEWPORTS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;

/** A new delivered order of a customer (in USD, of acme, unless told), so a test's refunds never meet another test's. */
export async function freshOrder(
  customer: string,
  totalCents = 15000,
  tenantId = "acme",
  currency = "USD",
): Promise<string> {
  const id = `ord_${randomInt(10_000_000, 99_999_999)}`;
  await database().query(
    `INSERT INTO "Order" (id, "tenantId", "customerId", "totalCents", currency, status, "addressLine1", "postalCode") VALUES ($1, $2, $3, $4, $5, 'delivered', '1 Elm St', '94107')`,
    [id, tenantId, customer, totalCents, currency],
  );
  return id;
}

/**
 * A refund an agent asked for on a fresh order of `customer` in a conversation of its own: the order, the conversation
 * and the gateway's answer (held for a supervisor when `amount` is above the tenant's automatic limit). Globex's agent
 * asks for a globex customer.
 */
export async function askedRefund(
  request: APIRequestContext,
  { customer, amount, key, totalCents, tenant = "acme" }: RefundAsked,
) {
  const order = await freshOrder(customer, totalCents, tenant);
  const agent = tenant === "globex" ? SEEDED.globexAgent : SEEDED.agent;
  const conversation = await openConversation(request, agent.email, { customer_id: customer });
  const answer = await propose(request, agent.email, conversation, refund(order, amount), `${key}-${order}`);
  return { order, conversation, answer };
}

interface RefundAsked {
  customer: string;
  amount: number;
  /** The call key's prefix; the order's id completes it. */
  key: string;
  totalCents?: number;
  tenant?: "acme" | "globex";
}

/**
 * The path of the link in the approval email sent to this recipient about this request, as the server's SMTP sink
 * received it (scripts/e2e-server.ts): the outbox keeps no token once the mail is sent. Waits for the outbox job.
 */
export async function emailedLinkPath(recipient: string, approvalId: string): Promise<string> {
  const mailDir = path.join(".toolgate", "e2e-mail");
  const received = () =>
    readdirSync(mailDir)
      .filter((file) => file.endsWith(".json"))
      .map((file) => JSON.parse(readFileSync(path.join(mailDir, file), "utf8")) as { to: string[]; raw: string })
      .filter((message) => message.to.includes(recipient))
      .map((message) => readableText(message.raw))
      .filter((text) => text.includes(`Request: ${approvalId}`));
  await expect.poll(() => received().length, { message: `the approval email to ${recipient}` }).toBe(1);
  const match = /https?:\/\/[^/\s]+(\/approvals\/r\/[A-Za-z0-9_-]{43})/.exec(received()[0]);
  expect(match).not.toBeNull();
  return match![1];
}

export async function refundsOf(order: string) {
  const { rows } = await database().query<{ count: string; refunded: number }>(
    `SELECT (SELECT count(*) FROM "Refund" WHERE "orderId" = $1) AS count, "refundedCents" AS refunded FROM "Order" WHERE id = $1`,
    [order],
  );
  return { count: Number(rows[0].count), refunded: rows[0].refunded };
}

/** No sideways scrolling, and no serious or critical accessibility violation; `title`: the tab names the page. */
export async function expectUsable(page: Page, title?: string) {
  // Next.js streams a page's metadata after its body: axe reads the page once its title has arrived.
  await expect(page).toHaveTitle(title ? `${title} · toolgate` : /\S/);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width, `page is ${width}px wide in a ${page.viewportSize()?.width}px viewport`).toBeLessThanOrEqual(
    page.viewportSize()!.width,
  );
  const results = await new AxeBuilder({ page }).analyze();
  const bad = results.violations.filter(
    (violation) => violation.impact === "serious" || violation.impact === "critical",
  );
  expect(
    bad.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`),
  ).toEqual([]);
}

export const shoot = (page: Page, name: string) =>
  process.env.UPDATE_SCREENSHOTS === "1"
    ? page.screenshot({ path: `docs/screenshots/${name}.png`, fullPage: true })
    : Promise.resolve();

/**
 * A platform authenticator in `page`'s browser that answers every WebAuthn ceremony at once, as a laptop's
 * fingerprint reader would; returns the CDP session and the authenticator's id, to read its credentials.
 */
export async function addVirtualPasskey(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

/** Where the e2e OAuth clients say they return (nothing listens: specs read where the browser was sent). */
export const CALLBACK = "http://127.0.0.1:4799/callback";

/** A client that registers itself (RFC 7591); the tenant must allow such clients. */
export async function registerClient(baseURL: string, name: string): Promise<string> {
  const response = await fetch(`${baseURL}/api/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: name, redirect_uris: [CALLBACK], token_endpoint_auth_method: "none" }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { client_id: string }).client_id;
}

/** The consent page's address for `clientId`, as an MCP client sends a person there. */
export function authorizeUrl(baseURL: string, clientId: string, challenge: string) {
  return `/oauth/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: CALLBACK,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "e2e-state",
    resource: `${baseURL}/api/mcp`,
  })}`;
}
