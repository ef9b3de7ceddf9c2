import { randomInt } from "node:crypto";
import bcrypt from "bcryptjs";
import { expect, test } from "@playwright/test";
import { expectUsable, shoot } from "../fixtures";
import { database, openConversation, propose, refund, SEEDED, signInAs, signedInPage } from "../support";

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
  const { context, page } = await signedInPage(browser, SEEDED.admin, baseURL!, {
    viewport: { width: 1280, height: 800 },
  });
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
    // A failed Check takes the last one's summary away; a failed publish says nothing was published.
    await text.fill(`${RULES}\n}`);
    await page.getByRole("button", { name: "Check" }).click();
    await expect(page.getByTestId("rules-errors")).toBeVisible();
    await expect(page.getByTestId("rules-draft-summary")).toHaveCount(0);
    await page.getByRole("button", { name: "Publish as shadow" }).click();
    await expect(page.getByTestId("rules-errors")).toBeVisible();
    await expect(page.getByTestId("rules-message")).toHaveText("Nothing was published.");

    await text.fill(RULES);
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
    // The action starts the instance's job runner on the replay at once, not at its next pass (every 10 s).
    await expect(page.getByTestId("replay-summary")).toContainText("2 calls of the", { timeout: 5_000 });
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

// Issue 38 in the browser: an admin drops a rule in force; the second admin's page shows the full diff from the live
// version (the dropped rule's lines marked removed) and the replay's verdict changes before they decide.
test("the second admin sees the full diff and the replay of a waiting rules change", async ({ browser, baseURL }) => {
  const bea = { id: "usr_acme_admin_bea", email: "bea@acme.test", role: "ADMIN", tenantId: "acme" } as const;
  await database().query(
    `INSERT INTO "User" (id, "tenantId", email, name, role, "passwordHash") VALUES ($1, 'acme', $2, 'Bea Admin', 'ADMIN', $3)
     ON CONFLICT (id) DO UPDATE SET active = true`,
    [bea.id, bea.email, bcrypt.hashSync("toolgate-demo", 4)],
  );
  const proposerContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const approverContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    await signInAs(proposerContext, SEEDED.admin, baseURL!);
    const proposer = await proposerContext.newPage();
    await proposer.goto("/admin/rules");
    const text = proposer.getByLabel("Rule text (Cedar)");
    await text.fill(RULES);
    await proposer.getByRole("button", { name: "Publish live" }).click();
    await expect(proposer.getByTestId("rules-message")).toContainText("as live.");

    await text.fill(RULES.split("\n\n")[1]);
    await proposer.getByRole("button", { name: "Publish live" }).click();
    await expect(proposer.getByTestId("rules-message")).toContainText(
      "Enter your password in the field for it and try again.",
    );
    await proposer.getByLabel("Your password, to confirm it is you").fill("toolgate-demo");
    await proposer.getByRole("button", { name: "Publish live" }).click();
    await expect(proposer.getByTestId("rules-message")).toContainText("waits for another admin");

    await signInAs(approverContext, bea, baseURL!);
    const approver = await approverContext.newPage();
    await approver.goto("/admin/policy");
    const waiting = approver.getByTestId("pending-change").first();
    await expect(waiting.getByTestId("pending-change-line")).toContainText(['drops or rewrites "old-orders-wait"']);
    const review = waiting.getByTestId("pending-rules-review");
    await expect(review.getByTestId("pending-rules-diff-removed")).toContainText([
      '@id("old-orders-wait")',
      "when { resource.age_days > 90 };",
    ]);
    await expect(review.getByTestId("pending-rules-diff-same")).toContainText(['@id("fraud-watch")']);
    await expect(review.getByTestId("pending-rules-replay-summary")).toContainText("recorded in the last 7 days");
    await expectUsable(approver);
    await waiting.getByRole("button", { name: "Cancel" }).click();
    await expect(approver.getByTestId("pending-change-message")).toHaveText("Cancelled.");
  } finally {
    await database().query(`UPDATE "Tenant" SET "liveRuleSetId" = NULL WHERE id = 'acme'`);
    await database().query(`UPDATE "User" SET active = false WHERE id = $1`, [bea.id]);
    await proposerContext.close();
    await approverContext.close();
  }
});

test("a set in force that no longer passes the checks is named on the rules page with what is wrong", async ({
  browser,
  baseURL,
}) => {
  const id = `prs_e2e_${randomInt(10_000_000, 99_999_999)}`;
  const [{ shadow }] = (
    await database().query<{ shadow: string | null }>(
      `SELECT "shadowRuleSetId" AS shadow FROM "Tenant" WHERE id = 'acme'`,
    )
  ).rows;
  // As a release that changed what rules may read would leave it: stored, in force, and refused by today's checks.
  await database().query(
    `INSERT INTO "PolicyRuleSet" (id, "tenantId", version, status, text, "createdById")
     VALUES ($1, 'acme', (SELECT COALESCE(max(version), 0) + 1 FROM "PolicyRuleSet" WHERE "tenantId" = 'acme'), 'shadow', $2, $3)`,
    [
      id,
      '@id("colour") @hold("red ones") forbid (principal, action, resource) when { resource.colour == "red" };',
      SEEDED.admin.id,
    ],
  );
  await database().query(`UPDATE "Tenant" SET "shadowRuleSetId" = $1 WHERE id = 'acme'`, [id]);
  const { context, page } = await signedInPage(browser, SEEDED.admin, baseURL!);
  try {
    await page.goto("/admin/rules");
    const problems = page.getByTestId("shadow-rules-problems");
    await expect(problems).toContainText(
      "This set no longer passes this version of toolgate's checks, so its verdicts are recorded as failed",
    );
    await expect(problems.getByRole("listitem")).toContainText(["colour"]);
    await expectUsable(page);
  } finally {
    await database().query(`UPDATE "Tenant" SET "shadowRuleSetId" = $1 WHERE id = 'acme'`, [shadow]);
    await context.close();
  }
});
