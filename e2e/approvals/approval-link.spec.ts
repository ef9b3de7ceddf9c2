import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { database, provider, SEEDED, signInAs, signedInPage } from "../support";
import { emailedLinkPath, expectUsable, refundsOf, shoot, VIEWPORTS, askedRefund } from "../fixtures";

async function linkState(approvalId: string) {
  const { rows } = await database().query<{ status: string; used: number }>(
    `SELECT a.status, (SELECT count(*)::int FROM "ApprovalLink" l WHERE l."approvalId" = a.id AND l."usedAt" IS NOT NULL) AS used FROM "ApprovalRequest" a WHERE a.id = $1`,
    [approvalId],
  );
  return rows[0];
}

/** Presses "Confirm approval" on the link's page and checks what the page answers. */
async function confirmSays(page: Page, answer: string) {
  await page.getByRole("button", { name: "Confirm approval" }).click();
  await expect(page.getByTestId("link-result")).toHaveText(answer);
}

/** The books of `order` and the approval's state with its links: nothing moves but what the person decided. */
async function expectBooks(order: string, approvalId: string, refunded: number, link: "pending" | "approved") {
  expect(await refundsOf(order)).toEqual({ count: refunded ? 1 : 0, refunded });
  expect(await linkState(approvalId)).toEqual({ status: link, used: link === "approved" ? 1 : 0 });
}

/** A refund held for a supervisor on a fresh order of `customer`, and the path of the link its email carries. */
async function heldWithLink(request: APIRequestContext, ask: { customer: string; amount: number; key: string }) {
  const { order, answer: held } = await askedRefund(request, ask);
  expect(held.code).toBe("approval.required");
  return { order, held, path: await emailedLinkPath(SEEDED.supervisor.email, held.approval!.id) };
}

for (const viewport of VIEWPORTS) {
  test.describe(`the approval email's link (${viewport.name})`, () => {
    test.use({ viewport: { width: viewport.width, height: viewport.height } });

    test("a scanner opening it twice decides nothing; the supervisor signs in, lands on the request and approves it once", async ({
      browser,
      request,
      baseURL,
    }) => {
      const { order, held, path } = await heldWithLink(request, {
        customer: "cu_ana",
        amount: 8000,
        key: `e2e-link-${viewport.name}`,
      });

      // A mail scanner: no session, follows nothing, opens twice. Then one with a session (a preview pane).
      for (let round = 0; round < 2; round++) {
        const opened = await request.get(path, { maxRedirects: 0 });
        expect(opened.status()).toBe(307);
        expect(opened.headers().location).toContain(`/login?next=${encodeURIComponent(path)}`);
      }
      const preview = await browser.newContext();
      await signInAs(preview, SEEDED.supervisor, baseURL!);
      for (let round = 0; round < 2; round++) {
        const opened = await preview.request.get(path);
        expect(opened.status()).toBe(200);
        expect(await opened.text()).toContain("80.00 USD refund on " + order);
      }
      await expectBooks(order, held.approval!.id, 0, "pending");

      // The supervisor clicks the link in the email, signs in, and is brought back to the request.
      const context = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
      const page = await context.newPage();
      await page.goto(path);
      await expect(page).toHaveURL(/\/login\?next=/);
      await page.getByLabel("Email").fill(SEEDED.supervisor.email);
      await page.getByLabel("Password").fill("toolgate-demo");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page).toHaveURL(new RegExp(`${path}$`));
      await expect(page.getByTestId("link-title")).toHaveText(`80.00 USD refund on ${order}`);
      await expect(page.getByText("ana@example.test")).toBeVisible();
      // The order as the desk's card shows it, with what is left to refund.
      await expect(page.getByTestId("link-order")).toHaveText(
        new RegExp(`^${order}: delivered, total [0-9,.]+ USD, refunded 0\\.00 USD, refundable [0-9,.]+ USD$`),
      );
      // Why it was held, as the desk's card says it.
      await expect(page.getByTestId("link-held")).toHaveText(
        "80.00 USD is above the 50.00 USD limit for refunds without approval",
      );
      await expectUsable(page);

      // A second tab of the same link, left open.
      const stale = await context.newPage();
      await stale.goto(path);
      await expect(stale.getByRole("button", { name: "Approve…" })).toBeEnabled();

      await page.getByRole("button", { name: "Approve…" }).click();
      await expect(page.getByRole("form", { name: "Confirm approval" })).toContainText(
        `80.00 USD refund on ${order} for ana@example.test`,
      );
      await confirmSays(page, `80.00 USD refund on ${order} approved; refund issued.`);
      // Decided here by this supervisor: the page says so in their words, not as someone else's decision.
      await expect(page.getByTestId("link-status")).toContainText("You approved it");
      await expectBooks(order, held.approval!.id, 8000, "approved");

      // The stale tab posts a second decision with the same link: refused, nothing changes.
      await stale.getByLabel("Reason for denying (the agent reads it)").fill("duplicate");
      await stale.getByRole("button", { name: "Deny" }).click();
      await expect(stale.getByTestId("link-result")).toContainText("already been used");
      await expectBooks(order, held.approval!.id, 8000, "approved");

      // The timeline the page links to tells the whole story.
      await page.getByRole("link", { name: "timeline of the call" }).click();
      await expect(page.getByTestId("timeline-code")).toHaveText("refund.issued");
      await expect(
        page.getByTestId("timeline-event").filter({ hasText: "by Sue Supervisor (supervisor@acme.test)" }),
      ).toContainText("Approved");
      await expect(page.getByTestId("timeline-event").last()).toContainText("Settled with the payment provider");
      await expectUsable(page);
      await preview.close();
      await context.close();
    });

    test("denying from the link needs a reason, which reaches the agent; another tenant's supervisor gets nothing", async ({
      browser,
      request,
      baseURL,
    }) => {
      const { order, held, path } = await heldWithLink(request, {
        customer: "cu_ben",
        amount: 9000,
        key: `e2e-link-deny-${viewport.name}`,
      });

      const { context: foreign, page: foreignPage } = await signedInPage(browser, SEEDED.globexSupervisor, baseURL!);
      await foreignPage.goto(path);
      await expect(foreignPage.getByTestId("link-problem")).toContainText("not valid");
      await expect(foreignPage.getByText(order)).toHaveCount(0);

      const { context, page } = await signedInPage(browser, SEEDED.supervisor, baseURL!, {
        viewport: { width: viewport.width, height: viewport.height },
      });
      await page.goto(path);
      // Denying without a reason says what is missing, and denies nothing.
      await page.getByLabel("Reason for denying (the agent reads it)").fill("   ");
      await page.getByRole("button", { name: "Deny" }).click();
      await expect(page.getByTestId("link-result")).toHaveText("Say why you deny it: the agent reads this reason.");
      expect(await linkState(held.approval!.id)).toEqual({ status: "pending", used: 0 });
      await page.getByLabel("Reason for denying (the agent reads it)").fill("refunded by phone");
      await page.getByRole("button", { name: "Deny" }).click();
      await expect(page.getByTestId("link-result")).toHaveText(`90.00 USD refund on ${order} denied.`);
      const { rows } = await database().query(`SELECT status, note FROM "ApprovalRequest" WHERE id = $1`, [
        held.approval!.id,
      ]);
      expect(rows[0]).toEqual({ status: "denied", note: "refunded by phone" });
      expect(await refundsOf(order)).toEqual({ count: 0, refunded: 0 });
      // Opened again, the link says who denied it and why, once.
      await page.reload();
      await expect(page.getByTestId("link-status")).toHaveText(
        /^You denied it (just now|\d+ seconds? ago), saying “refunded by phone”\. Nothing more can be decided here\.$/,
      );
      await foreign.close();
      await context.close();
    });
  });
}

test("from the link, approving more than the step-up amount asks for the password first, then approves once", async ({
  browser,
  request,
  baseURL,
}) => {
  const { order, held, path } = await heldWithLink(request, {
    customer: "cu_ana",
    amount: 12000,
    key: `e2e-link-step-up`,
  });
  const { context, page } = await signedInPage(browser, SEEDED.supervisor, baseURL!);
  await page.goto(path);
  // The deadline counts down as on the desk.
  await expect(page.getByTestId("time-left")).toHaveText(/^1[45] minutes( \d+ seconds?)? left$/);
  await page.getByRole("button", { name: "Approve…" }).click();
  // The confirmation asks for the password at once: one press approves, as on the desk.
  const password = page.getByLabel("Above 100.00 USD: your password, to confirm it is you");
  await expect(password).toBeFocused();
  await shoot(page, "link-step-up");
  await expectBooks(order, held.approval!.id, 0, "pending");
  await password.fill("not-my-password");
  await confirmSays(page, "That password is not right.");
  // Focus goes back to the field to type it again, not to the page.
  await expect(password).toBeFocused();
  await password.fill("toolgate-demo");
  await confirmSays(page, `120.00 USD refund on ${order} approved; refund issued.`);
  await expectBooks(order, held.approval!.id, 12000, "approved");
  const { rows } = await database().query<{ stepUpMethod: string }>(
    `SELECT "stepUpMethod" FROM "ApprovalRequest" WHERE id = $1`,
    [held.approval!.id],
  );
  expect(rows[0].stepUpMethod).toBe("password");
  await context.close();
});

test("on a phone, the link's page lowers a refund before approving it: the page, the books and the provider agree", async ({
  browser,
  request,
  baseURL,
}) => {
  const { order, held, path } = await heldWithLink(request, {
    customer: "cu_ana",
    amount: 8000,
    key: `e2e-link-lower`,
  });
  const { context, page } = await signedInPage(browser, SEEDED.supervisor, baseURL!, {
    viewport: { width: 390, height: 844 },
  });
  await page.goto(path);
  // By keyboard: focus moves into the confirmation (read with what it restates), and back to "Approve…" on Cancel.
  const approve = page.getByRole("button", { name: "Approve…" });
  await approve.focus();
  await page.keyboard.press("Enter");
  const confirmation = page.getByRole("form", { name: "Confirm approval" });
  await expect(confirmation).toBeFocused();
  await expect(confirmation).toHaveAccessibleDescription(/^Approve 80\.00 USD refund on .+\? It executes now/);
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(approve).toBeFocused();
  await approve.click();
  const amount = page.getByLabel("Amount to refund (USD, at most 80.00 USD)");
  await expect(amount).toHaveValue("80.00");
  await amount.fill("90.00");
  // The confirmation keeps what may be approved, and says what is wrong with the rest.
  await expect(page.getByTestId("link-confirm")).toContainText(`Approve 80.00 USD refund on ${order} for`);
  // What is wrong is said beside the field.
  await page.getByRole("button", { name: "Confirm approval" }).click();
  await expect(page.getByTestId("amount-problem")).toHaveText(
    "Enter an amount from 0.01 up to 80.00 USD; an approval can only lower it.",
  );
  await expectBooks(order, held.approval!.id, 0, "pending");
  await amount.fill("50");
  await expect(page.getByTestId("amount-problem")).toHaveCount(0);
  await expect(page.getByTestId("link-confirm")).toContainText(
    `Approve 50.00 USD refund on ${order} (lowered from 80.00 USD) for`,
  );
  await expectUsable(page);
  await amount.press("Enter");
  await expect(page.getByTestId("link-result")).toHaveText(
    `50.00 USD refund on ${order} (lowered from 80.00 USD) approved; refund issued.`,
  );
  await expectBooks(order, held.approval!.id, 5000, "approved");
  expect((await provider.totalsByOrder())[order]).toBe(5000);
  await expect(page.getByTestId("link-title")).toHaveText(`50.00 USD refund on ${order} (lowered from 80.00 USD)`);
  await context.close();
});
