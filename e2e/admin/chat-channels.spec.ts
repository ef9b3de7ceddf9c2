import { expect, test } from "@playwright/test";
import { database, SEEDED, signedInPage } from "../support";
import { expectUsable, shoot } from "../fixtures";

// An admin in the browser on Admin → Slack and Teams: a Teams workflow URL at what only the server can reach is
// refused in words that say why and what to use, and nothing is stored.

test("a Teams workflow at the cloud metadata address is refused in words, and nothing is stored", async ({
  browser,
  baseURL,
}) => {
  const { context, page } = await signedInPage(browser, SEEDED.admin, baseURL!, {
    viewport: { width: 390, height: 844 },
  });
  await page.goto("/admin/chat");
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Held calls in Slack and Teams");
  await expect(page.getByTestId("slack-channel")).toContainText("Slack is not connected.");
  const stored = async () =>
    Number(
      (await database().query<{ n: string }>(`SELECT count(*) AS n FROM "ChatChannel" WHERE "tenantId" = 'acme'`))
        .rows[0].n,
    );
  await page.getByLabel(/Workflow webhook URL/).fill("http://169.254.169.254/latest/meta-data/");
  await page.getByRole("button", { name: "Connect Teams" }).click();
  await expect(page.getByText("169.254.169.254 is a cloud metadata address")).toBeVisible();
  await expect(page.getByText("Use the workflow's public address.")).toBeVisible();
  await expectUsable(page, "Slack and Teams");
  await shoot(page, "admin-chat-refused-phone");
  expect(await stored()).toBe(0);
  await context.close();
});

test("a chat notice's desk link, opened signed out, sends to sign-in with the way back to that card", async ({
  browser,
  baseURL,
}) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const link = "/approvals?q=apr_from_slack#request-apr_from_slack";
  const response = await page.request.get(`${baseURL}${link}`, { maxRedirects: 0 });
  expect(response.status()).toBe(307);
  expect(response.headers().location).toBe(`/login?next=${encodeURIComponent("/approvals?q=apr_from_slack")}`);
  await context.close();
});
