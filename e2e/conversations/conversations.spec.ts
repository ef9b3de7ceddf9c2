import { expect, test, type Page } from "@playwright/test";
import { database, propose, refund, SEEDED, signedInPage } from "../support";
import { expectUsable, freshOrder, VIEWPORTS } from "../fixtures";

/** Fails the test on any hydration mismatch or page error the browser reports. */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error" && /hydrat|did not match/i.test(message.text())) errors.push(message.text());
  });
  return errors;
}

for (const viewport of VIEWPORTS) {
  test.describe(`conversations for support agents (${viewport.name})`, () => {
    test.use({ viewport: { width: viewport.width, height: viewport.height } });

    test("pick a customer by searching, open a conversation bound to an order, see status, pending count and each call's timeline", async ({
      browser,
      baseURL,
      request,
    }) => {
      const order = await freshOrder("cu_ben", 20000);
      const { context, page } = await signedInPage(browser, SEEDED.agent, baseURL!, {
        viewport: { width: viewport.width, height: viewport.height },
      });
      const errors = watchErrors(page);
      await page.goto("/conversations");
      await expectUsable(page);

      await page.getByLabel("Find a customer").fill("BEN@");
      await expect(page.getByRole("radio")).toHaveCount(1);
      await page.getByRole("radio", { name: /ben@example\.test/ }).check();
      await page.getByLabel("Bind to an order (optional)").selectOption(order);
      await page.getByRole("button", { name: "Open conversation with ben@example.test" }).click();
      await expect(page).toHaveURL(/\/conversations\/conv_/);
      await expect(page.getByRole("heading", { level: 1 })).toContainText("Conversation with ben@example.test");
      await expect(page.getByTestId("calls-empty")).toBeVisible();
      const conversation = page.url().split("/").pop()!;
      const { rows } = await database().query(`SELECT "customerId", "orderId" FROM "Conversation" WHERE id = $1`, [
        conversation,
      ]);
      expect(rows[0]).toEqual({ customerId: "cu_ben", orderId: order });

      const held = await propose(request, SEEDED.agent.email, conversation, refund(order, 8000), `e2e-conv-${order}`);
      expect(held.code).toBe("approval.required");
      await expect(page.getByTestId("call-row")).toHaveCount(1);
      const row = page.getByTestId("call-row").first();
      await expect(row.getByTestId("call-timeline")).toHaveText(`80.00 USD refund on ${order}`);
      const time = row.locator("time").first();
      await expect(time).toHaveAttribute("title", /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
      await expect(time).toHaveText(/just now|second|minute/);
      await expectUsable(page);

      await page.goto("/conversations");
      const listed = page.locator(`[data-testid="conversation-row"][data-conversation-id="${conversation}"]`);
      await expect(listed).toContainText("ben@example.test");
      await expect(listed).toContainText(`bound to ${order}`);
      await expect(listed.getByTestId("conversation-status")).toHaveText("1 request waiting for approval");
      await expect(listed).toContainText("1 call, 0 writes");
      await expectUsable(page);

      await listed.getByRole("link", { name: "ben@example.test" }).click();
      await page.getByTestId("call-timeline").first().click();
      await expect(page).toHaveURL(new RegExp(`/calls/${held.id}$`));
      await expect(page.getByTestId("timeline-event")).toHaveCount(2);
      await expect(page.getByTestId("timeline-event").nth(1)).toContainText("Held for a supervisor's approval");
      // The way back names the customer, the id beside it.
      await expect(page.getByRole("link", { name: "Conversation with ben@example.test" })).toBeVisible();
      await expectUsable(page);
      expect(errors).toEqual([]);
      await context.close();
    });

    test("a read-only agent's conversation says its refunds are outside the agent's permissions, and a refund says so too", async ({
      browser,
      baseURL,
    }) => {
      const readOnly = { id: "usr_acme_agent2", email: "agent2@acme.test", role: "AGENT", tenantId: "acme" } as const;
      const { context, page } = await signedInPage(browser, readOnly, baseURL!, {
        viewport: { width: viewport.width, height: viewport.height },
      });
      await page.goto("/conversations");
      await page.getByLabel("Find a customer").fill("ana@");
      await page.getByRole("radio", { name: /ana@example\.test/ }).check();
      await page.getByRole("button", { name: "Open conversation with ana@example.test" }).click();
      await expect(page).toHaveURL(/\/conversations\/conv_/);
      await expect(page.getByRole("main")).toContainText("refund (not within this agent's permissions)");
      // An empty envelope is said at the field, not sent and recorded as a refused call.
      const rows = await page.getByTestId("call-row").count();
      await page.getByLabel(/^Envelope/).fill("");
      await page.getByRole("button", { name: "Propose" }).click();
      await expect(page.getByText("Write the tool call first")).toBeVisible();
      await expect(page.getByLabel(/^Envelope/)).toBeFocused();
      await expect(page.getByTestId("call-row")).toHaveCount(rows);
      await page.getByLabel(/^Envelope/).fill(JSON.stringify(refund("ord_1004", 1000)));
      await page.getByRole("button", { name: "Propose" }).click();
      await expect(page.getByTestId("call-row").first()).toContainText(
        "Not within this agent's permissions (an admin grants them under Policy)",
      );
      await expectUsable(page);
      await context.close();
    });

    test("the picker says when nobody matches and offers nothing of another tenant", async ({ browser, baseURL }) => {
      const { context, page } = await signedInPage(browser, SEEDED.agent, baseURL!, {
        viewport: { width: viewport.width, height: viewport.height },
      });
      await page.goto("/conversations");
      await page.getByLabel("Find a customer").fill("gil");
      await expect(page.getByText("No customer matches “gil”")).toBeVisible();
      await page.getByLabel("Find a customer").fill("");
      // The tenant's own customers (other specs may add some to it), never another tenant's Gil.
      await expect(page.getByRole("radio", { name: /^ana@example\.test/ })).toBeVisible();
      await expect(page.getByRole("radio", { name: /^ben@example\.test/ })).toBeVisible();
      await expect(page.getByRole("radio", { name: /gil@/ })).toHaveCount(0);
      await expect(page.getByRole("button", { name: "Open conversation" })).toBeDisabled();
      await context.close();
    });
  });
}
