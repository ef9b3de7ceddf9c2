import { expect, test, type Browser } from "@playwright/test";
import { database, SEEDED, signedInPage } from "../support";
import { expectUsable, VIEWPORTS } from "../fixtures";

async function auditCount() {
  const { rows } = await database().query<{ count: number }>(
    `SELECT count(*)::int AS count FROM "AuditLog" WHERE "tenantId" = 'acme'`,
  );
  return rows[0].count;
}

for (const viewport of VIEWPORTS) {
  test.describe(`admin (${viewport.name})`, () => {
    test.use({ viewport: { width: viewport.width, height: viewport.height } });
    const adminPage = (browser: Browser, baseURL: string) =>
      signedInPage(browser, SEEDED.admin, baseURL, { viewport: { width: viewport.width, height: viewport.height } });

    test("policy in currency units: a bad value is named by its label, an unchanged save records nothing, a change shows actor and diff", async ({
      browser,
      baseURL,
    }) => {
      const { context, page } = await adminPage(browser, baseURL!);
      await page.goto("/admin/policy");
      const autoLimit = page.getByLabel("Auto limit");
      await expect(autoLimit).toHaveValue("50.00");
      await expect(page.getByText("Allowed: 0.00 to 100,000.00, in currency units.").first()).toBeVisible();
      await expectUsable(page);

      const before = await auditCount();
      await page.getByRole("button", { name: "Save policy" }).click();
      await expect(page.getByTestId("policy-message")).toHaveText("Nothing changed, so nothing was recorded.");
      expect(await auditCount()).toBe(before);

      // A value out of its range is named at its field, which takes the focus; nothing is sent.
      const lifetime = page.getByLabel("Approval lifetime (seconds)");
      await lifetime.fill("5");
      await page.getByRole("button", { name: "Save policy" }).click();
      await expect(page.getByTestId("policy-field-error")).toHaveText(
        "Approval lifetime (seconds) must be from 30 to 604,800.",
      );
      await expect(lifetime).toBeFocused();
      await expect(lifetime).toHaveAttribute("aria-invalid", "true");
      await expect(page.getByTestId("policy-message")).toHaveCount(0);
      expect(await auditCount()).toBe(before);

      await lifetime.fill("900");
      await expect(page.getByTestId("policy-field-error")).toHaveCount(0);
      await expect(page.getByTestId("step-up-password")).toHaveCount(0);
      await autoLimit.fill("60.00");
      // Raising a limit loosens control: the form asks for the password as it is typed, and nothing changes without it.
      await expect(page.getByLabel("Loosens control (Auto limit): your password, to confirm it is you")).toBeVisible();
      await page.getByRole("button", { name: "Save policy" }).click();
      await expect(page.getByTestId("policy-message")).toHaveText("Enter your password to confirm it is you.");
      expect(await auditCount()).toBe(before);
      await page.getByTestId("step-up-password").fill("toolgate-demo");
      await page.getByRole("button", { name: "Save policy" }).click();
      await expect(page.getByTestId("policy-message")).toHaveText("Saved.");
      // What is in force now is what the form holds: nothing left to confirm.
      await expect(page.getByTestId("step-up-password")).toHaveCount(0);
      const latest = page.getByTestId("audit-row").first();
      await expect(latest).toContainText("admin@acme.test");
      await expect(latest).toContainText("Changed the policy");
      await expect(latest.getByTestId("audit-change")).toHaveText(["Auto limit: 50.00 → 60.00"]);
      await expect(latest.locator("time")).toHaveAttribute("title", /UTC$/);
      expect(await auditCount()).toBe(before + 1);

      await autoLimit.fill("50.00");
      await page.getByRole("button", { name: "Save policy" }).click();
      await expect(page.getByTestId("policy-message")).toHaveText("Saved.");
      await expectUsable(page);
      await context.close();
    });

    test("the page's sections are linked at its top, and each link takes the keyboard to its section", async ({
      browser,
      baseURL,
    }) => {
      const { context, page } = await adminPage(browser, baseURL!);
      await page.goto("/admin/policy");
      const sections = page.getByRole("navigation", { name: "On this page" }).getByRole("link");
      await expect(sections).toHaveCount(10);
      await expect(sections.first()).toHaveText("Changes waiting");
      await sections.filter({ hasText: "Agent API keys" }).focus();
      await page.keyboard.press("Enter");
      await expect(page).toHaveURL(/#api-keys$/);
      await expect(page.getByRole("heading", { name: "Agent API keys" })).toBeInViewport();
      await context.close();
    });

    test("withdraw an agent's refund permission at once; a grant waits for a second admin and can be cancelled; each audited", async ({
      browser,
      baseURL,
    }) => {
      const { context, page } = await adminPage(browser, baseURL!);
      await page.goto("/admin/policy");
      const row = page.locator(`[data-testid="refund-permission"][data-user-id="${SEEDED.agent.id}"]`);
      await expect(row.getByTestId("refund-permission-state")).toHaveText("may issue refunds");
      await row.getByRole("button", { name: "Withdraw refunds from Ada Agent" }).click();
      await expect(row.getByTestId("refund-permission-state")).toHaveText("may not issue refunds");
      await expect(page.getByTestId("audit-row").first()).toContainText("Withdrew refunds");
      const canRefund = async () =>
        (await database().query(`SELECT "canRefund" FROM "User" WHERE id = $1`, [SEEDED.agent.id])).rows[0];
      expect(await canRefund()).toEqual({ canRefund: false });
      // Granting loosens control: it asks for the admin's password (no passkey) first, and changes nothing without it.
      await row.getByRole("button", { name: "Grant refunds to Ada Agent" }).click();
      await expect(page.getByRole("alert").first()).toContainText("Granting refunds needs you to confirm it is you");
      await expect(row.getByTestId("refund-permission-state")).toHaveText("may not issue refunds");
      await page.getByTestId("step-up-password").fill("toolgate-demo");
      await row.getByRole("button", { name: "Grant refunds to Ada Agent" }).click();
      await expect(page.getByTestId("refund-permission-held")).toContainText("unless a supervisor or admin cancels it");
      await expect(row.getByTestId("refund-permission-state")).toHaveText("may not issue refunds");
      expect(await canRefund()).toEqual({ canRefund: false });
      const waiting = page.getByTestId("pending-change").first();
      await expect(waiting.getByTestId("pending-change-line")).toHaveText([
        "agent@acme.test: refunds not allowed → allowed",
      ]);
      const proposed = page.getByTestId("audit-row").first();
      await expect(proposed).toContainText("Proposed a change that waits");
      // What the change is about comes before its id.
      await expect(proposed.getByTestId("audit-change")).toHaveText([/^An agent's refund permission \(chg_[\w-]+\)$/]);
      await waiting.getByRole("button", { name: "Cancel" }).click();
      await expect(page.getByTestId("pending-change-message")).toHaveText("Cancelled.");
      await expect(page.getByTestId("audit-row").first().getByTestId("audit-change")).toHaveText([
        /^An agent's refund permission \(chg_[\w-]+\)$/,
      ]);
      await expect(page.getByTestId("pending-changes-empty")).toBeVisible();
      expect(await canRefund()).toEqual({ canRefund: false });
      // Back to the seeded state for the other specs, as a second admin's approval would leave it.
      await database().query(`UPDATE "User" SET "canRefund" = true WHERE id = $1`, [SEEDED.agent.id]);
      await context.close();
    });
  });
}
