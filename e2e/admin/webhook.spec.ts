import { expect, test } from "@playwright/test";
import { database, SEEDED, signedInPage } from "../support";
import { expectUsable, shoot } from "../fixtures";

// An admin in the browser points the approval webhook at what only the server can reach: refused in words that say
// why and what to use, nothing stored.

test("a webhook at the cloud metadata address or loopback is refused in words, and nothing is stored", async ({
  browser,
  baseURL,
}) => {
  const { context, page } = await signedInPage(browser, SEEDED.admin, baseURL!, {
    viewport: { width: 390, height: 844 },
  });
  await page.goto("/admin/policy");
  const stored = async () =>
    (await database().query<{ url: string | null }>(`SELECT "webhookUrl" AS url FROM "Tenant" WHERE id = 'acme'`))
      .rows[0].url;
  const before = await stored();
  // What is missing is said before any step-up is asked for.
  await page.getByRole("button", { name: "Save webhook" }).click();
  await expect(page.getByText("Fill in the URL and the signing secret first.")).toBeVisible();
  await page.getByLabel("URL", { exact: true }).fill("https://hooks.example.com/toolgate");
  await page.getByLabel("Signing secret").fill("short");
  await page.getByRole("button", { name: "Save webhook" }).click();
  await expect(page.getByText("The signing secret needs at least 16 characters; it has 5.")).toBeVisible();
  for (const [url, words] of [
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"],
    ["http://127.0.0.1:5432/", "127.0.0.1 is a loopback, private or link-local address"],
  ]) {
    await page.getByLabel("URL", { exact: true }).fill(url);
    await page.getByLabel("Signing secret").fill("whsec_0123456789abcdef");
    await page.getByRole("button", { name: "Save webhook" }).click();
    await expect(page.getByText(words)).toBeVisible();
  }
  await expect(page.getByText("Use the receiver's public address.")).toBeVisible();
  await expectUsable(page);
  await shoot(page, "admin-webhook-refused-phone");
  expect(await stored()).toBe(before);
  await context.close();
});
