import { expect, test, type Browser } from "@playwright/test";
import { expectUsable, freshOrder } from "../fixtures";
import {
  apiKey,
  database,
  openConversation,
  propose,
  provider,
  refund,
  SEEDED,
  signInAs,
  signedInPage,
} from "../support";

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === "1";

// tests/payments/investigations.integration.test.ts drives a refund into investigation through real provider faults; here
// the browser closes one. Setup writes the state reconciliation leaves when it cannot confirm a refund in time.

/** A supervisor's Approvals page, and the 12.00 USD refund under investigation on it. */
async function openInvestigation(browser: Browser, baseURL: string, refundId: string) {
  const context = await browser.newContext();
  await signInAs(context, SEEDED.supervisor, baseURL);
  const page = await context.newPage();
  await page.goto("/approvals");
  const item = page.locator(`[data-testid="investigation"][data-refund-id="${refundId}"]`);
  await expect(item).toContainText("12.00 USD");
  return { context, page, item };
}

test("a supervisor closes a refund under investigation as issued; the order unblocks and the agent's call becomes final", async ({
  browser,
  baseURL,
  request,
}) => {
  const conversation = await openConversation(request, SEEDED.agent.email, { customer_id: "cu_ana" });
  const call = await propose(request, SEEDED.agent.email, conversation, refund("ord_1001", 1200), "e2e-investigate-1");
  expect(call.code).toBe("refund.issued");
  const db = database();
  const {
    rows: [made],
  } = await db.query<{ id: string; providerRefundId: string }>(
    `SELECT "id", "providerRefundId" FROM "Refund" WHERE "toolCallId" = $1`,
    [call.id],
  );
  await db.query(
    `UPDATE "Refund" SET "status" = 'investigate', "providerRefundId" = NULL, "lastError" = 'not settled within the reconciliation window' WHERE "id" = $1`,
    [made.id],
  );
  await db.query(`UPDATE "Order" SET "refundPending" = true WHERE "id" = 'ord_1001'`);
  await db.query(
    `UPDATE "ToolCall" SET "kind" = 'unavailable', "stage" = 'execute', "code" = 'refund.outcome-unknown', "outcome" = $2::jsonb WHERE "id" = $1`,
    [call.id, JSON.stringify({ kind: "unavailable", stage: "execute", code: "refund.outcome-unknown" })],
  );

  const { context, page, item } = await openInvestigation(browser, baseURL!, made.id);
  await expect(item.getByRole("button", { name: "Close as issued" })).toBeDisabled();
  if (SCREENSHOTS) {
    await page.screenshot({ path: "docs/screenshots/investigations.png", fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: "docs/screenshots/investigations-phone.png", fullPage: true });
    await page.setViewportSize({ width: 1280, height: 720 });
  }
  await item.getByLabel("Provider refund reference").fill(made.providerRefundId);
  await item.getByRole("button", { name: "Close as issued" }).click();
  await expect(item).toHaveCount(0);

  const final = await request.get(`/api/v1/tool-calls/${call.id}`, {
    headers: { authorization: `Bearer ${apiKey(SEEDED.agent.email)}` },
  });
  expect(await final.json()).toMatchObject({ kind: "executed", code: "refund.issued" });
  const { rows } = await db.query(
    `SELECT r."status", r."resolvedById", o."refundPending", o."refundedCents",
            (SELECT count(*)::int FROM "AuditLog" a WHERE a."action" = 'refund.investigation-issued' AND a."detail"->>'refundId' = r."id") AS "audited"
     FROM "Refund" r JOIN "Order" o ON o."id" = r."orderId" WHERE r."id" = $1`,
    [made.id],
  );
  expect(rows[0]).toEqual({
    status: "issued",
    resolvedById: SEEDED.supervisor.id,
    refundPending: false,
    refundedCents: 1200,
    audited: 1,
  });
  await context.close();
});

test("a supervisor releases a refund the provider never made; the order is refundable again and provider = books", async ({
  browser,
  baseURL,
  request,
}) => {
  const order = await freshOrder("cu_ana", 5000);
  const conversation = await openConversation(request, SEEDED.agent.email, { customer_id: "cu_ana" });
  // Every attempt meets a 503 before the provider acts: nothing is refunded, but only the provider could say so.
  await provider.queueFaults(["unavailable_before", "unavailable_before", "unavailable_before"]);
  const call = await propose(request, SEEDED.agent.email, conversation, refund(order, 1200), `e2e-release-${order}`);
  await provider.queueFaults([]);
  expect(call.code).toBe("refund.outcome-unknown");
  const db = database();
  const {
    rows: [made],
  } = await db.query<{ id: string }>(
    `UPDATE "Refund" SET "status" = 'investigate', "lastError" = 'not settled within the reconciliation window'
     WHERE "toolCallId" = $1 RETURNING "id"`,
    [call.id],
  );

  const { context, item } = await openInvestigation(browser, baseURL!, made.id);
  await expect(item.getByRole("button", { name: "Release" })).toBeDisabled();
  await item.getByLabel("Why nothing was refunded").fill("provider dashboard shows no refund under this key");
  // Releasing lets the order be refunded again: it asks the supervisor to confirm it is them, and without that
  // nothing is released.
  await item.getByRole("button", { name: "Release" }).click();
  await expect(item.getByRole("alert")).toContainText("confirm it is you");
  expect((await db.query(`SELECT "status" FROM "Refund" WHERE id = $1`, [made.id])).rows[0].status).toBe("investigate");
  await item.getByLabel("Your password, to confirm it is you").fill("toolgate-demo");
  await item.getByRole("button", { name: "Release" }).click();
  await expect(item).toHaveCount(0);

  const final = await request.get(`/api/v1/tool-calls/${call.id}`, {
    headers: { authorization: `Bearer ${apiKey(SEEDED.agent.email)}` },
  });
  const answer = await final.json();
  expect(answer).toMatchObject({
    code: "host.error",
    model: { reason: "The payment provider did not make this refund: nothing was paid." },
  });
  expect(JSON.stringify(answer)).not.toContain("dashboard");
  const { rows } = await db.query(
    `SELECT r."status", r."resolvedById", o."refundPending", o."refundedCents"
     FROM "Refund" r JOIN "Order" o ON o."id" = r."orderId" WHERE r."id" = $1`,
    [made.id],
  );
  expect(rows[0]).toEqual({
    status: "released",
    resolvedById: SEEDED.supervisor.id,
    refundPending: false,
    refundedCents: 0,
  });
  expect((await provider.totalsByOrder())[order] ?? 0).toBe(rows[0].refundedCents);
  await context.close();
});

test("the desk says when reconciliation is paused, why, and since when", async ({ browser, baseURL }) => {
  const db = database();
  const reachedAt = new Date(Date.now() - 2 * 3600_000);
  await db.query(
    `INSERT INTO "ReconcileStatus" ("id", "ok", "reason", "checkedAt", "lastOkAt")
     VALUES ('provider', false, 'the provider refused the shared secret (401)', now(), $1)
     ON CONFLICT ("id") DO UPDATE SET "ok" = false, "reason" = EXCLUDED."reason", "checkedAt" = now(), "lastOkAt" = $1`,
    [reachedAt],
  );
  try {
    const { context, page } = await signedInPage(browser, SEEDED.supervisor, baseURL!);
    await page.goto("/approvals");
    const banner = page.getByTestId("reconcile-paused");
    await expect(banner).toContainText("Reconciliation is paused");
    await expect(banner).toContainText("the provider refused the shared secret (401)");
    await expect(banner).toContainText("last reached 2 hours ago");
    await expect(banner.locator("time").last()).toHaveAttribute(
      "title",
      `${reachedAt.toISOString().slice(0, 10)} ${reachedAt.toISOString().slice(11, 19)} UTC`,
    );
    await page.setViewportSize({ width: 390, height: 844 });
    await expectUsable(page);
    await context.close();
  } finally {
    await db.query(
      `UPDATE "ReconcileStatus" SET "ok" = true, "reason" = NULL, "lastOkAt" = now() WHERE "id" = 'provider'`,
    );
  }
});

test("a refund the provider paid past its order's total is listed for supervisors until one notes what was done", async ({
  browser,
  baseURL,
  request,
}) => {
  const order = await freshOrder("cu_ana", 5000);
  const conversation = await openConversation(request, SEEDED.agent.email, { customer_id: "cu_ana" });
  const call = await propose(request, SEEDED.agent.email, conversation, refund(order, 1200), `e2e-overpaid-${order}`);
  expect(call.code).toBe("refund.issued");
  // The state reconciliation leaves when a released refund's late request was paid after its order was refunded
  // again (tests/payments/late-request.integration.test.ts drives it through the provider's faults).
  const db = database();
  const {
    rows: [late],
  } = await db.query<{ id: string; providerRefundId: string }>(
    `UPDATE "Refund" SET "overpaidCents" = 300, "overpaidAt" = now() - interval '5 minutes',
       "lastError" = 'made by the provider after it was released here (not re-sent: order.fraud-hold)'
     WHERE "toolCallId" = $1 RETURNING "id", "providerRefundId"`,
    [call.id],
  );

  const { context, page } = await signedInPage(browser, SEEDED.supervisor, baseURL!);
  await page.goto("/approvals");
  const item = page.locator(`[data-testid="overpaid-refund"][data-refund-id="${late.id}"]`);
  await expect(page.getByRole("heading", { name: "Refunded past the order's total" })).toBeVisible();
  await expect(item).toContainText(
    `3.00 USD paid beyond the total of order ${order}: its refund of 12.00 USD was made as ${late.providerRefundId}`,
  );
  await expect(item).toContainText("found 5 minutes ago");
  await expect(item.getByRole("button", { name: "Close" })).toBeDisabled();
  await page.setViewportSize({ width: 390, height: 844 });
  await expectUsable(page);
  if (SCREENSHOTS) await page.screenshot({ path: "docs/screenshots/overpaid-phone.png", fullPage: true });
  await item.getByLabel("What was done with the customer").fill("the customer returns 12.00 USD");
  await item.getByRole("button", { name: "Close" }).press("Enter");
  // Closing clears the listing and its alert: it asks the supervisor to confirm it is them first.
  await expect(item.getByRole("alert")).toContainText("confirm it is you");
  await expect(item).toHaveCount(1);
  await item.getByLabel("Your password, to confirm it is you").fill("toolgate-demo");
  await item.getByRole("button", { name: "Close" }).press("Enter");
  await expect(item).toHaveCount(0);
  const { rows } = await db.query(
    `SELECT r."overpaidClosedById", a."detail"->>'note' AS "note"
     FROM "Refund" r JOIN "AuditLog" a ON a."action" = 'refund.overpaid-closed' AND a."detail"->>'refundId' = r."id"
     WHERE r."id" = $1`,
    [late.id],
  );
  expect(rows).toEqual([{ overpaidClosedById: SEEDED.supervisor.id, note: "the customer returns 12.00 USD" }]);
  await context.close();
});
