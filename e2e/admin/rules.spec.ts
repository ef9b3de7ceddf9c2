import { randomInt } from "node:crypto";
import { expect, test } from "@playwright/test";
import { expectUsable, shoot } from "../fixtures";
import { database, openConversation, propose, refund, SEEDED, signInAs } from "../support";

// Issue 26 in the browser: an admin checks a rule set (errors in words), publishes it as shadow, a burst of calls
// runs, and the page shows exactly the calls the shadow rules would decide differently, with their amounts; replay
// over the recorded decisions reports the same calls.

const RULES = `@id("old-orders-wait")
@hold("Refunds on orders older than 90 days wait for a supervisor")
forbid (principal, action == Action::"issue_refund", resource)
when { resource.age_days > 90 };

@id("fraud-watch")
@deny("customer-on-fraud-watch")
forbid (principal, action == Action::"issue_refund", resource)
when { resource.customer.fraud_watch };`;

/** A customer of acme of long standing with one delivered order placed `days` ago. */
async function customerWithOrder(days: number, fraudWatch = false) {
  const suffix = randomInt(10_000_000, 99_999_999);
  const customer = `cu_rules_${suffix}`;
  const order = `ord_${suffix}`;
  await database().query(
    `INSERT INTO "Customer" (id, "tenantId", email, "fraudWatch", "createdAt") VALUES ($1, 'acme', $2, $3, now() - interval '400 days')`,
    [customer, `rules-${suffix}@example.test`, fraudWatch],
  );
  await database().query(
    `INSERT INTO "Order" (id, "tenantId", "customerId", "totalCents", currency, status, "addressLine1", "postalCode", "placedAt")
     VALUES ($1, 'acme', $2, 15000, 'USD', 'delivered', '1 Elm St', '94107', now() - make_interval(days => $3))`,
    [order, customer, days],
  );
  return { customer, order };
}

const rowsOf = async (table: import("@playwright/test").Locator) =>
  table.evaluateAll((rows) =>
    rows.map((row) => [
      row.getAttribute("data-call-id"),
      ...[...row.querySelectorAll("td")].slice(2).map((cell) => cell.textContent),
    ]),
  );

test("a shadow rule set shows exactly the calls it would decide differently, and replay agrees", async ({
  browser,
  baseURL,
  request,
}) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await signInAs(context, SEEDED.admin, baseURL!);
  const page = await context.newPage();
  try {
    await page.goto("/admin/rules");
    const text = page.getByLabel("Rule text (Cedar)");

    await text.fill('@id("a") @hold("b") permit (principal, action, resource);');
    await page.getByRole("button", { name: "Check" }).click();
    await expect(page.getByTestId("rules-errors")).toContainText("only `forbid` rules are allowed");

    await text.fill(RULES);
    await page.getByRole("button", { name: "Check" }).click();
    await expect(page.getByTestId("rules-message")).toHaveText("Valid: 2 rules.");
    await expect(page.getByTestId("rules-draft-summary")).toContainText(
      "Refuses issue_refund calls when resource.customer.fraud_watch, whoever approves (code customer-on-fraud-watch).",
    );
    await page.getByRole("button", { name: "Publish as shadow" }).click();
    await expect(page.getByTestId("rules-message")).toContainText("as shadow.");

    const old = await customerWithOrder(120);
    const recent = await customerWithOrder(5);
    const watched = await customerWithOrder(5, true);
    const burst = [];
    for (const [who, amount] of [
      [old, 2000],
      [recent, 1000],
      [watched, 1500],
    ] as const) {
      const conversation = await openConversation(request, SEEDED.agent.email, { customer_id: who.customer });
      burst.push(
        await propose(request, SEEDED.agent.email, conversation, refund(who.order, amount), `rules-${randomInt(1e9)}`),
      );
    }
    // Never enforced: every refund of the burst executed.
    expect(burst.map((call) => call.code)).toEqual(["refund.issued", "refund.issued", "refund.issued"]);

    await page.reload();
    const shadowRows = page.getByTestId("shadow-call");
    await expect(shadowRows).toHaveCount(2);
    const shadow = await rowsOf(shadowRows);
    expect(shadow).toEqual([
      [burst[2].id, "15.00 USD", "allowed", "refused", "fraud-watch"],
      [burst[0].id, "20.00 USD", "allowed", "held for a supervisor", "old-orders-wait"],
    ]);
    await expect(page.getByTestId("shadow-rule")).toHaveText([
      "fraud-watch1 call15.00 USD",
      "old-orders-wait1 call20.00 USD",
    ]);

    await page.getByRole("button", { name: "Replay over the last 7 days" }).click();
    await expect(page.getByTestId("replay-summary")).toContainText("2 calls of the");
    expect(await rowsOf(page.getByTestId("replay-call"))).toEqual(shadow);
    await expect(page.getByTestId("rules-history-row").first()).toContainText("(shadow now)");
    await expectUsable(page);
    await shoot(page, "admin-rules");
    await page.setViewportSize({ width: 390, height: 844 });
    await expectUsable(page);
  } finally {
    await database().query(`UPDATE "Tenant" SET "shadowRuleSetId" = NULL WHERE id = 'acme'`);
    await context.close();
  }
});
