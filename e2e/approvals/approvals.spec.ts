import { expect, test, type Page } from "@playwright/test";
import { freshOrder, refundsOf, shoot } from "../fixtures";
import { database, openConversation, propose, refund, SEEDED, signedInPage } from "../support";

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === "1";

async function callRow(page: Page, callId: string) {
  return page.locator(`[data-testid="call-row"][data-call-id="${callId}"]`);
}

test("approve: the agent's 8000-cent refund waits, the supervisor approves it, the agent sees it execute live", async ({
  browser,
  baseURL,
  request,
}) => {
  const conversation = await openConversation(request, SEEDED.agent.email, { customer_id: "cu_ana" });
  const pending = await propose(request, SEEDED.agent.email, conversation, refund("ord_1004", 8000), "e2e-approve-1");
  expect(pending.code).toBe("approval.required");

  const { context: agentContext, page: agentPage } = await signedInPage(browser, SEEDED.agent, baseURL!);
  await agentPage.goto(`/conversations/${conversation}`);
  const row = await callRow(agentPage, pending.id);
  await expect(row.getByTestId("call-code")).toHaveText("approval.required");
  await expect(agentPage.getByTestId("live-state")).toHaveText("● live");

  // The supervisor signs in through the real form.
  const supervisorContext = await browser.newContext();
  const supervisorPage = await supervisorContext.newPage();
  await supervisorPage.goto("/login");
  await supervisorPage.getByLabel("Email").fill(SEEDED.supervisor.email);
  await supervisorPage.getByLabel("Password").fill("toolgate-demo");
  await supervisorPage.getByRole("button", { name: "Sign in" }).click();
  // The person and the tenant by name; the email too, on a wide screen.
  await expect(supervisorPage.getByTestId("whoami")).toContainText(
    "Sue Supervisor (supervisor@acme.test) · supervisor · Acme",
  );
  await supervisorPage.goto("/approvals");
  const item = supervisorPage.locator(`[data-testid="approval-item"][data-approval-id="${pending.approval!.id}"]`);
  await expect(item.getByTestId("card-title")).toHaveText("Refund 80.00 USD on ord_1004");
  await expect(item.getByTestId("card-who")).toContainText("For ana@example.test · asked by");
  await expect(item.getByTestId("card-who")).toContainText("(agent@acme.test)");
  // Supervisors cannot open an agent's conversation page: the card links the call's timeline, which they can.
  await expect(item.getByRole("link", { name: "the call's timeline" })).toHaveAttribute("href", `/calls/${pending.id}`);
  await expect(item.getByTestId("card-why")).toContainText(
    "80.00 USD is above the 50.00 USD limit for refunds without approval",
  );
  await expect(item.getByTestId("preview-order")).toHaveText(
    "delivered · total 150.00 USD · refunded 0.00 USD · refundable 150.00 USD",
  );
  await expect(item.getByTestId("preview-arguments")).toHaveText("amount: 80.00 USD · reason: damaged");
  await expect(item.getByTestId("time-left")).toHaveText(/^1[45] minutes( \d+ seconds?)? left$/);
  if (SCREENSHOTS) await supervisorPage.screenshot({ path: "docs/screenshots/approval-queue.png", fullPage: true });

  await item.getByRole("button", { name: "Approve", exact: true }).click();
  const dialog = supervisorPage.getByTestId("decide-dialog");
  await expect(dialog.getByRole("heading")).toHaveText("Approve 80.00 USD refund on ord_1004?");
  await expect(dialog.getByTestId("decide-restate")).toHaveText("80.00 USD refund on ord_1004 for ana@example.test");
  expect(await refundsOf("ord_1004")).toEqual({ count: 0, refunded: 0 });
  await dialog.getByRole("button", { name: "Confirm approval" }).click();
  await expect(supervisorPage.getByTestId("toast")).toHaveText("80.00 USD refund on ord_1004 approved");

  // No reload: the agent's page follows the decision over server-sent events.
  await expect(row.getByTestId("call-code")).toHaveText("refund.issued");
  await expect(row.getByTestId("call-kind")).toHaveText("executed");
  if (SCREENSHOTS) await agentPage.screenshot({ path: "docs/screenshots/conversation.png", fullPage: true });
  expect(await refundsOf("ord_1004")).toEqual({ count: 1, refunded: 8000 });
  await agentContext.close();
  await supervisorContext.close();
});

test("deny: a refund proposed from the console form is denied with a note and never executes", async ({
  browser,
  baseURL,
  request,
}) => {
  const conversation = await openConversation(request, SEEDED.agent.email, { customer_id: "cu_ben" });
  const { context: agentContext, page: agentPage } = await signedInPage(browser, SEEDED.agent, baseURL!);
  await agentPage.goto(`/conversations/${conversation}`);
  await agentPage.getByLabel("envelope").fill(JSON.stringify(refund("ord_1002", 8000)));
  await agentPage.getByLabel("call key").fill("e2e-deny-1");
  await agentPage.getByRole("button", { name: "Propose" }).click();
  await expect(agentPage.getByTestId("console-answer")).toContainText('"code": "approval.required"');
  const row = agentPage.getByTestId("call-row").first();
  await expect(row.getByTestId("call-code")).toHaveText("approval.required");
  const callId = await row.getAttribute("data-call-id");
  const { rows } = await database().query<{ approvalId: string }>(`SELECT "approvalId" FROM "ToolCall" WHERE id = $1`, [
    callId,
  ]);
  const approvalId = rows[0].approvalId;

  const { context: supervisorContext, page: supervisorPage } = await signedInPage(browser, SEEDED.supervisor, baseURL!);
  await supervisorPage.goto("/approvals");
  const item = supervisorPage.locator(`[data-testid="approval-item"][data-approval-id="${approvalId}"]`);
  await item.getByRole("button", { name: "Deny", exact: true }).click();
  const dialog = supervisorPage.getByTestId("decide-dialog");
  // A denial needs a reason: the agent reads it.
  await dialog.getByRole("button", { name: "Deny", exact: true }).click();
  await expect(dialog.getByRole("alert")).toHaveText("Say why you deny it: the agent reads this reason.");
  expect(
    (await database().query(`SELECT status FROM "ApprovalRequest" WHERE id = $1`, [approvalId])).rows[0].status,
  ).toBe("pending");
  await dialog.getByLabel("Reason (the agent reads it)").fill("already refunded by phone");
  await dialog.getByRole("button", { name: "Deny", exact: true }).click();
  await expect(supervisorPage.getByTestId("toast")).toHaveText("80.00 USD refund on ord_1002 denied");

  await expect(row.getByTestId("call-code")).toHaveText("approval.denied");
  await expect(row.getByTestId("call-kind")).toHaveText("denied");
  expect(await refundsOf("ord_1002")).toEqual({ count: 0, refunded: 0 });
  await supervisorPage.goto("/approvals/history");
  const history = supervisorPage.locator(`[data-testid="history-item"][data-approval-id="${approvalId}"]`);
  await expect(history.getByTestId("history-status")).toHaveText("denied");
  await expect(history).toContainText("already refunded by phone");
  await agentContext.close();
  await supervisorContext.close();
});

test("expired: a request past its lifetime is shown as expired, can never execute, and the call says so", async ({
  browser,
  baseURL,
  request,
}) => {
  await database().query(`UPDATE "Tenant" SET "approvalTtlSeconds" = 2 WHERE id = 'globex'`);
  try {
    const conversation = await openConversation(request, SEEDED.globexAgent.email, { customer_id: "cu_gil" });
    const pending = await propose(
      request,
      SEEDED.globexAgent.email,
      conversation,
      refund("ord_2001", 6000),
      "e2e-expire-1",
    );
    expect(pending.code).toBe("approval.required");
    await new Promise((resolve) => setTimeout(resolve, 2500));

    const { context: supervisorContext, page } = await signedInPage(browser, SEEDED.globexSupervisor, baseURL!);
    await page.goto("/approvals");
    await expect(page.locator(`[data-approval-id="${pending.approval!.id}"]`)).toHaveCount(0);
    // Reading writes nothing: the expiry job (every 10 s) records the request as expired, and History shows it then.
    await expect(async () => {
      await page.goto("/approvals/history");
      await expect(
        page
          .locator(`[data-testid="history-item"][data-approval-id="${pending.approval!.id}"]`)
          .getByTestId("history-status"),
      ).toHaveText("expired", {
        timeout: 1000,
      });
    }).toPass({ timeout: 40_000 });

    const current = await request.get(`/api/v1/tool-calls/${pending.id}`, {
      headers: { authorization: `Bearer ${(await import("../support")).apiKey(SEEDED.globexAgent.email)}` },
    });
    expect(await current.json()).toMatchObject({ kind: "unavailable", stage: "approval", code: "approval.expired" });
    expect(await refundsOf("ord_2001")).toEqual({ count: 0, refunded: 0 });
    await supervisorContext.close();
  } finally {
    await database().query(`UPDATE "Tenant" SET "approvalTtlSeconds" = 900 WHERE id = 'globex'`);
  }
});

test("an agent cannot open /approvals or call the approve action, so the requester cannot approve their own call", async ({
  browser,
  baseURL,
  request,
}) => {
  const conversation = await openConversation(request, SEEDED.agent.email, { customer_id: "cu_ana" });
  const pending = await propose(request, SEEDED.agent.email, conversation, refund("ord_1004", 6000), "e2e-self-1");
  expect(pending.code).toBe("approval.required");
  const before = await refundsOf("ord_1004");

  const { context: agentContext, page: agentPage } = await signedInPage(browser, SEEDED.agent, baseURL!);
  await agentPage.goto("/approvals");
  await expect(agentPage).toHaveURL(/\/\?denied=%2Fapprovals&for=SUPERVISOR$/);
  const notice = agentPage.getByRole("main").getByRole("alert");
  await expect(notice).toHaveText(
    "Your role, agent, cannot open /approvals: it is for supervisors. Your own pages start at the link below.",
  );
  await expect(agentPage).toHaveTitle("Not a page for your role · toolgate");
  await shoot(agentPage, "home-denied");
  // A crafted link puts no words of its own on the front door: only a path of this site and known roles are named.
  await agentPage.goto("/?denied=https%3A%2F%2Fevil.example%2Fpay&for=OWNER,toString");
  await expect(notice).toHaveText("Your role, agent, cannot open that page. Your own pages start at the link below.");
  await expect(agentPage.getByTestId("approval-item")).toHaveCount(0);

  // Capture the real server-action request a supervisor's Approve click sends (without letting it through),
  // then send exactly that request with the requesting agent's session.
  const { context: supervisorContext, page: supervisorPage } = await signedInPage(browser, SEEDED.supervisor, baseURL!);
  await supervisorPage.goto("/approvals");
  let captured: { headers: Record<string, string>; body: string } | null = null;
  await supervisorPage.route("**/approvals", async (route) => {
    if (route.request().method() !== "POST") return route.continue();
    captured = { headers: route.request().headers(), body: route.request().postData() ?? "" };
    await route.abort();
  });
  const item = supervisorPage.locator(`[data-testid="approval-item"][data-approval-id="${pending.approval!.id}"]`);
  await item.getByRole("button", { name: "Approve", exact: true }).click();
  await supervisorPage.getByTestId("decide-dialog").getByRole("button", { name: "Confirm approval" }).click();
  await expect.poll(() => captured).not.toBeNull();
  const forged = captured!;
  expect(forged.body).toContain(pending.approval!.id);

  const response = await agentContext.request.post("/approvals", {
    headers: {
      "next-action": forged.headers["next-action"],
      "content-type": forged.headers["content-type"],
      accept: "text/x-component",
    },
    data: forged.body,
  });
  expect(await response.text()).toContain("auth.forbidden");
  expect(await refundsOf("ord_1004")).toEqual(before);
  const { rows } = await database().query<{ status: string }>(`SELECT status FROM "ApprovalRequest" WHERE id = $1`, [
    pending.approval!.id,
  ]);
  expect(rows[0].status).toBe("pending");
  await agentContext.close();
  await supervisorContext.close();
});

test("a globex supervisor cannot see acme requests", async ({ browser, baseURL, request }) => {
  const conversation = await openConversation(request, SEEDED.agent.email, { customer_id: "cu_ana" });
  const pending = await propose(request, SEEDED.agent.email, conversation, refund("ord_1004", 5500), "e2e-tenant-1");
  expect(pending.code).toBe("approval.required");
  const { context, page } = await signedInPage(browser, SEEDED.globexSupervisor, baseURL!);
  await page.goto("/approvals");
  await expect(page.getByRole("heading", { name: "Pending approvals" })).toBeVisible();
  await expect(page.locator(`[data-approval-id="${pending.approval!.id}"]`)).toHaveCount(0);
  await expect(page.getByText("ord_1004")).toHaveCount(0);
  await page.goto("/approvals/history");
  await expect(page.getByText("ord_1004")).toHaveCount(0);
  await context.close();
});

test("bulk: two requests approved together are re-checked one by one, and one failing does not undo the other", async ({
  browser,
  baseURL,
  request,
}) => {
  const conversationA = await openConversation(request, SEEDED.agent.email, { customer_id: "cu_ben" });
  const conversationB = await openConversation(request, SEEDED.agent.email, { customer_id: "cu_ben" });
  const first = await propose(request, SEEDED.agent.email, conversationA, refund("ord_1002", 9000), "e2e-bulk-a");
  const second = await propose(request, SEEDED.agent.email, conversationB, refund("ord_1002", 8000), "e2e-bulk-b");
  expect([first.code, second.code]).toEqual(["approval.required", "approval.required"]);
  const before = await refundsOf("ord_1002");

  const { context, page } = await signedInPage(browser, SEEDED.supervisor, baseURL!);
  await page.goto("/approvals");
  await page
    .locator(`[data-approval-id="${first.approval!.id}"]`)
    .getByRole("checkbox", { name: "select 90.00 USD refund on ord_1002" })
    .check();
  await page
    .locator(`[data-approval-id="${second.approval!.id}"]`)
    .getByRole("checkbox", { name: "select 80.00 USD refund on ord_1002" })
    .check();
  // On a phone, scrolled down past the selected cards, the batch's buttons stay in reach.
  const size = page.viewportSize()!;
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator(`[data-approval-id="${second.approval!.id}"]`).scrollIntoViewIfNeeded();
  await page.mouse.wheel(0, 1500);
  await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(844);
  await expect(page.getByRole("button", { name: "Approve selected (2)" })).toBeInViewport();
  await page.screenshot({ path: "test-results/approvals-bulk-phone.png" });
  await page.setViewportSize(size);
  await page.getByRole("button", { name: "Approve selected (2)" }).click();
  const dialog = page.getByTestId("decide-dialog");
  await expect(dialog.getByTestId("decide-restate")).toHaveText(
    ["90.00 USD refund on ord_1002 for ben@example.test", "80.00 USD refund on ord_1002 for ben@example.test"].join(""),
  );
  await expect(dialog).toContainText("Total: 170.00 USD");
  await expect(dialog.getByTestId("decide-overdrawn")).toHaveText(
    `Together they ask 170.00 USD of ord_1002, which has ${((15900 - before.refunded) / 100).toFixed(2)} USD refundable now: the re-check stops what does not fit, and it is not executed.`,
  );
  await dialog.getByRole("button", { name: "Confirm approval" }).click();
  const refundable = 15900 - before.refunded - 9000;
  await expect(page.getByTestId("toast")).toHaveText([
    "90.00 USD refund on ord_1002 approved",
    `80.00 USD refund on ord_1002 stopped by its re-check: only ${(refundable / 100).toFixed(2)} USD is refundable now, the request was for 80.00 USD; nothing was executed`,
  ]);
  expect(await refundsOf("ord_1002")).toEqual({ count: before.count + 1, refunded: before.refunded + 9000 });
  await context.close();
});

test("bulk: refunds in two currencies are totalled apart in the dialog, never added up in one", async ({
  browser,
  baseURL,
  request,
}) => {
  const [usd, eur] = [await freshOrder("cu_ben", 20000), await freshOrder("cu_ben", 20000, "acme", "EUR")];
  const conversation = await openConversation(request, SEEDED.agent.email, { customer_id: "cu_ben" });
  const first = await propose(request, SEEDED.agent.email, conversation, refund(usd, 9000), `e2e-mixed-${usd}`);
  const second = await propose(request, SEEDED.agent.email, conversation, refund(eur, 8000, "EUR"), `e2e-mixed-${eur}`);
  expect([first.code, second.code]).toEqual(["approval.required", "approval.required"]);

  const { context, page } = await signedInPage(browser, SEEDED.supervisor, baseURL!);
  await page.goto("/approvals?sort=newest");
  await page.getByRole("checkbox", { name: `select 90.00 USD refund on ${usd}` }).check();
  await page.getByRole("checkbox", { name: `select 80.00 EUR refund on ${eur}` }).check();
  await page.getByRole("button", { name: "Approve selected (2)" }).click();
  const dialog = page.getByTestId("decide-dialog");
  await expect(dialog).toContainText("Total: 90.00 USD + 80.00 EUR");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toHaveCount(0);
  await context.close();
});
