import bcrypt from "bcryptjs";
import { expect, test, type Page } from "@playwright/test";
import { expectUsable, VIEWPORTS } from "../fixtures";
import { database, SEEDED, signedInPage } from "../support";

// The two-admin rule in the browser (docs/decisions/015): one admin raises the per-call limit, the change waits;
// a second admin sees who proposed what (old → new), confirms it is them and approves; lowering it applies at once.

const BEA = { id: "usr_acme_admin_bea", email: "bea@acme.test", role: "ADMIN", tenantId: "acme" } as const;

async function autoLimit(): Promise<number> {
  const { rows } = await database().query<{ cents: number }>(
    `SELECT "autoLimitCents" AS cents FROM "Tenant" WHERE id = 'acme'`,
  );
  return rows[0].cents;
}

/** A raised limit asks for the password as soon as it is typed; it is given, then the policy saved. */
async function saveWithStepUp(page: Page) {
  await page.getByLabel(/^Loosens control \(.+\): your password, to confirm it is you$/).fill("toolgate-demo");
  await page.getByRole("button", { name: "Save policy" }).click();
}

for (const viewport of VIEWPORTS) {
  test(`a second admin approves a raised limit in the browser; lowering it applies at once (${viewport.name})`, async ({
    browser,
    baseURL,
  }) => {
    await database().query(
      `INSERT INTO "User" (id, "tenantId", email, name, role, "passwordHash") VALUES ($1, 'acme', $2, 'Bea Admin', 'ADMIN', $3)
       ON CONFLICT (id) DO UPDATE SET active = true`,
      [BEA.id, BEA.email, bcrypt.hashSync("toolgate-demo", 4)],
    );
    try {
      const size = { width: viewport.width, height: viewport.height };
      const { context: proposerContext, page: proposer } = await signedInPage(browser, SEEDED.admin, baseURL!, {
        viewport: size,
      });
      await proposer.goto("/admin/policy");
      await proposer.getByLabel("Auto limit").fill("100000.00");
      await saveWithStepUp(proposer);
      await expect(proposer.getByTestId("policy-message")).toContainText("waits for another admin to approve it");
      expect(await autoLimit()).toBe(5000);
      const row = proposer.getByTestId("pending-change").first();
      await expect(row.getByTestId("pending-change-line")).toHaveText(["Auto limit: 50.00 USD → 100,000.00 USD"]);
      await expect(row.getByRole("button", { name: "Approve" })).toBeDisabled();
      await expect(row.locator("time").first()).toHaveAttribute("title", /UTC$/);

      // Every supervisor sees it on their queue too, with Cancel and no Approve.
      const { context: supervisorContext, page: supervisor } = await signedInPage(
        browser,
        SEEDED.supervisor,
        baseURL!,
        { viewport: size },
      );
      await supervisor.goto("/approvals");
      const seen = supervisor.getByTestId("pending-change").first();
      await expect(seen.getByTestId("pending-change-line")).toHaveText(["Auto limit: 50.00 USD → 100,000.00 USD"]);
      await expect(seen.getByRole("button", { name: "Cancel" })).toBeEnabled();
      await expect(seen.getByRole("button", { name: "Approve" })).toHaveCount(0);
      await expectUsable(supervisor);
      await supervisorContext.close();

      const { context: approverContext, page: approver } = await signedInPage(browser, BEA, baseURL!, {
        viewport: size,
      });
      await approver.goto("/admin/policy");
      const waiting = approver.getByTestId("pending-change").first();
      await expect(waiting).toContainText("admin@acme.test");
      await expect(waiting.getByTestId("pending-change-line")).toHaveText(["Auto limit: 50.00 USD → 100,000.00 USD"]);
      await expectUsable(approver);
      await approver.screenshot({ path: `docs/screenshots/admin-changes-${viewport.name}.png`, fullPage: false });
      await waiting.getByRole("button", { name: "Approve" }).click();
      await expect(approver.getByTestId("pending-change-message")).toContainText("confirm it is you");
      await approver.getByLabel("Your password, to confirm it is you").fill("toolgate-demo");
      await waiting.getByRole("button", { name: "Approve" }).click();
      await expect(approver.getByTestId("pending-change-message")).toHaveText("Approved and applied.");
      expect(await autoLimit()).toBe(10_000_000);
      const { rows } = await database().query(
        `SELECT status, "decidedById" FROM "AdminChange" WHERE "tenantId" = 'acme' ORDER BY "createdAt" DESC LIMIT 1`,
      );
      expect(rows[0]).toEqual({ status: "applied", decidedById: BEA.id });

      // Tightening never waits and needs no step-up.
      await approver.reload();
      await approver.getByLabel("Auto limit").fill("50.00");
      await approver.getByRole("button", { name: "Save policy" }).click();
      await expect(approver.getByTestId("policy-message")).toHaveText("Saved.");
      expect(await autoLimit()).toBe(5000);
      await proposerContext.close();
      await approverContext.close();
    } finally {
      await database().query(`UPDATE "User" SET active = false WHERE id = $1`, [BEA.id]);
    }
  });
}
