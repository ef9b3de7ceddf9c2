import { expect, test } from "@playwright/test";
import { apiKey, database, openConversation, propose, refund, SEEDED, signInAs } from "./support";

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === "1";

// tests/investigations.integration.test.ts drives a refund into investigation through real provider faults; here
// the browser closes one. Setup writes the state reconciliation leaves when it cannot confirm a refund in time.

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

  const context = await browser.newContext();
  await signInAs(context, SEEDED.supervisor, baseURL!);
  const page = await context.newPage();
  await page.goto("/approvals");
  const item = page.locator(`[data-testid="investigation"][data-refund-id="${made.id}"]`);
  await expect(item).toContainText("12.00 USD");
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
