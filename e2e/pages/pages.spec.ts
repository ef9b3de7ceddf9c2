import { expect, test, type BrowserContext } from "@playwright/test";
import {
  database,
  openConversation,
  propose,
  refund,
  SEEDED,
  signInAs,
  type SeededUser,
  signedInPage,
} from "../support";
import { emailedLinkPath, expectUsable, freshOrder, shoot, VIEWPORTS, askedRefund } from "../fixtures";

// Every page at desktop and 390 px: no sideways scrolling and no serious or critical axe violation; the
// history's filters, search and paging by keyboard; the screenshots the README shows.

for (const viewport of VIEWPORTS) {
  test.describe(`every page (${viewport.name})`, () => {
    test.use({ viewport: { width: viewport.width, height: viewport.height } });
    // Eight pages through axe: on two shared cores that alone can take most of the default minute.
    test.describe.configure({ timeout: 180_000 });
    const suffix = viewport.name === "phone" ? "-phone" : "";

    async function as(browserContext: () => Promise<BrowserContext>, user: SeededUser | null, baseURL: string) {
      const context = await browserContext();
      if (user) await signInAs(context, user, baseURL);
      return context.newPage();
    }

    test("login, conversations, conversation, approvals, history, timeline, admin and the email link are usable", async ({
      browser,
      baseURL,
      request,
    }) => {
      const newContext = () => browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
      const order = await freshOrder("cu_ana");
      const conversation = await openConversation(request, SEEDED.agent.email, {
        customer_id: "cu_ana",
        order_id: order,
      });
      await propose(
        request,
        SEEDED.agent.email,
        conversation,
        { name: "get_order", arguments: { order_id: order } },
        `e2e-pages-read-${order}`,
      );
      const approvedRefund = await propose(
        request,
        SEEDED.agent.email,
        conversation,
        refund(order, 7000),
        `e2e-pages-a-${order}`,
      );
      const waiting = await propose(
        request,
        SEEDED.agent.email,
        conversation,
        refund(order, 6000),
        `e2e-pages-b-${order}`,
      );
      expect([approvedRefund.code, waiting.code]).toEqual(["approval.required", "approval.required"]);

      const anonymous = await as(newContext, null, baseURL!);
      await anonymous.goto("/login");
      await expectUsable(anonymous, "Sign in");

      const supervisor = await as(newContext, SEEDED.supervisor, baseURL!);
      await supervisor.goto(await emailedLinkPath(SEEDED.supervisor.email, approvedRefund.approval!.id));
      await expectUsable(supervisor, "Approval request");
      await supervisor.getByRole("button", { name: "Approve…" }).click();
      await supervisor.getByRole("button", { name: "Confirm approval" }).click();
      await expect(supervisor.getByTestId("link-result")).toContainText("approved; refund issued");
      await supervisor.goto("/approvals");
      await expect(supervisor.locator(`[data-approval-id="${waiting.approval!.id}"]`)).toBeVisible();
      await expectUsable(supervisor, "Pending approvals");
      await supervisor.goto("/approvals/history");
      await expectUsable(supervisor, "Decision history");
      await supervisor.goto(`/approvals/history?q=${order}`);
      await expect(supervisor.getByTestId("history-item")).toHaveCount(1);
      await shoot(supervisor, `history${suffix}`);
      await supervisor.goto(`/calls/${approvedRefund.id}`);
      await expect(supervisor.getByTestId("timeline-event").last()).toContainText("Settled with the payment provider");
      await expectUsable(supervisor, "Call timeline");
      if (!suffix) await shoot(supervisor, "timeline");

      const agent = await as(newContext, SEEDED.agent, baseURL!);
      await agent.goto("/conversations");
      await expectUsable(agent, "Your conversations");
      if (!suffix) await shoot(agent, "conversations");
      await agent.goto(`/conversations/${conversation}`);
      await expect(agent.getByTestId("call-row")).toHaveCount(3);
      await expectUsable(agent, "Conversation");
      if (!suffix) await shoot(agent, "conversation");

      const admin = await as(newContext, SEEDED.admin, baseURL!);
      await admin.goto("/admin/policy");
      await expectUsable(admin, "Policy and keys");
      if (!suffix) await shoot(admin, "admin");
    });

    test("an address that leads nowhere says so in words, with the way back", async ({ browser, baseURL }) => {
      const { context, page } = await signedInPage(browser, SEEDED.supervisor, baseURL!, {
        viewport: { width: viewport.width, height: viewport.height },
      });
      for (const address of ["/calls/call_does_not_exist", "/no-such-page"]) {
        const response = await page.goto(address);
        expect(response?.status()).toBe(404);
        await expect(page.getByRole("heading", { level: 1 })).toHaveText("Nothing here");
        await expectUsable(page);
      }
      await expect(page).toHaveTitle("Nothing here · toolgate");
      await page.getByRole("link", { name: "Go to your workspace" }).click();
      await expect(page).toHaveURL(`${baseURL}/approvals`);
      await context.close();
    });

    test("the first Tab offers to skip the navigation, and the next one lands in the page's content", async ({
      browser,
      baseURL,
    }) => {
      const { context, page } = await signedInPage(browser, SEEDED.supervisor, baseURL!, {
        viewport: { width: viewport.width, height: viewport.height },
      });
      for (const path of ["/approvals", "/approvals/history", "/settings"]) {
        await page.goto(path);
        await page.keyboard.press("Tab");
        const skip = page.getByRole("link", { name: "Skip to content" });
        await expect(skip).toBeFocused();
        await expect(skip).toBeInViewport();
        await page.keyboard.press("Enter");
        await page.keyboard.press("Tab");
        expect(await page.evaluate(() => document.activeElement?.closest("main")?.id)).toBe("main");
      }
      await context.close();
    });

    test("history by keyboard: search, filter by outcome, open the timeline, page by keyset", async ({
      browser,
      baseURL,
      request,
    }) => {
      const { context, page } = await signedInPage(browser, SEEDED.supervisor, baseURL!, {
        viewport: { width: viewport.width, height: viewport.height },
      });
      const {
        order,
        conversation,
        answer: denied,
      } = await askedRefund(request, { customer: "cu_ben", amount: 9000, key: `e2e-history` });
      await page.goto(await emailedLinkPath(SEEDED.supervisor.email, denied.approval!.id));
      await page.getByLabel("Reason for denying (the agent reads it)").fill("customer withdrew");
      await page.getByRole("button", { name: "Deny" }).click();
      await expect(page.getByTestId("link-result")).toContainText("denied");

      await page.goto("/approvals/history");
      const search = page.getByRole("searchbox", { name: "Search" });
      await search.focus();
      await page.keyboard.type(order);
      await page.keyboard.press("Tab");
      await expect(page.getByLabel("Outcome")).toBeFocused();
      await page.getByLabel("Outcome").selectOption("denied");
      await search.focus();
      await page.keyboard.press("Enter");
      await expect(page).toHaveURL(new RegExp(`q=${order}.*outcome=denied|outcome=denied.*q=${order}`));
      const rows = page.getByTestId("history-item");
      await expect(rows).toHaveCount(1);
      await expect(rows.first()).toContainText(`90.00 USD refund on ${order}`);
      await expect(rows.first()).toContainText("for ben@example.test, requested by Ada Agent");
      await expect(rows.first()).toContainText("Sue Supervisor");
      await expect(rows.first().getByTestId("history-status")).toHaveText("denied");
      await expect(rows.first()).toContainText("customer withdrew");
      await expect(rows.first().getByTestId("history-latency")).toHaveText(/^\d+ (seconds?|minutes?)( \d+ seconds?)?$/);
      await expect(rows.first().locator("time")).toHaveAttribute("title", /UTC$/);

      await page.getByLabel("Outcome").selectOption("approved");
      await search.focus();
      await page.keyboard.press("Enter");
      await expect(page.getByTestId("history-empty")).toHaveText("No decision matches these filters.");
      await page.getByRole("link", { name: "Clear filters" }).click();
      await expect(page).toHaveURL(/\/approvals\/history$/);

      await page.goto(`/approvals/history?q=${order}`);
      const link = page.getByTestId("history-timeline").first();
      await link.focus();
      await expect(link).toBeFocused();
      const outline = await link.evaluate((element) => getComputedStyle(element).outlineStyle);
      expect(outline).not.toBe("none");
      await page.keyboard.press("Enter");
      await expect(page).toHaveURL(new RegExp(`/calls/${denied.id}$`));
      await expect(page.getByTestId("timeline-event").last()).toContainText(
        "Denied by Sue Supervisor (supervisor@acme.test)",
      );

      // Keyset paging over more than a page of decisions: each page starts strictly after the last row of the one before.
      await database().query(
        `INSERT INTO "ApprovalRequest" (id, "tenantId", "conversationId", "originCallId", "toolName", "orderId", "argsHash", "impactCents", preview, status,
                                        "requestedById", "expiresAt", "createdAt", "decidedAt", "decidedById", "resultCode")
         SELECT 'apr_e2e_' || $1 || '_' || g, 'acme', $2, 'call_e2e_' || $1 || '_' || g, 'issue_refund', $1, md5(g::text), 100,
                '{"impact":{"amount_cents":100,"currency":"USD"}}'::jsonb, 'denied', $3, now(), now() - interval '1 hour', now() - (g || ' seconds')::interval, $4, 'approval.denied'
         FROM generate_series(1, 60) AS g`,
        [order, conversation, SEEDED.agent.id, SEEDED.supervisor.id],
      );
      await page.goto(`/approvals/history?q=${order}`);
      const ids = () =>
        page
          .getByTestId("history-item")
          .evaluateAll((items) => items.map((item) => item.getAttribute("data-approval-id")!));
      const firstPage = await ids();
      expect(firstPage).toHaveLength(50);
      await page.getByTestId("history-older").click();
      await expect(page).toHaveURL(/before=/);
      await expect(page).toHaveURL(new RegExp(`q=${order}`));
      const secondPage = await ids();
      expect(secondPage).toHaveLength(11);
      expect(new Set([...firstPage, ...secondPage]).size).toBe(61);
      await expect(page.getByTestId("history-older")).toHaveCount(0);
      await context.close();
    });
  });
}
