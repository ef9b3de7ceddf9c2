import { expect, test, type Page } from "@playwright/test";
import { database, SEEDED, signInAs } from "../support";

// Every page runs under the CSP (nonce, 'strict-dynamic', frame-ancestors 'none') with no console error: a
// script or style the policy blocks shows up here. And the login page says when to try again after a lock,
// the same for a real account and an unknown one.

function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("response", (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  return errors;
}

const pages: [string, keyof typeof SEEDED | null][] = [
  ["/login", null],
  ["/", null],
  ["/conversations", "agent"],
  ["/approvals", "supervisor"],
  ["/approvals/history", "supervisor"],
  ["/admin/policy", "admin"],
  ["/admin/chat", "admin"],
];

for (const [path, who] of pages) {
  test(`${path} renders and hydrates under the CSP with no console error`, async ({ browser, baseURL }) => {
    const context = await browser.newContext();
    if (who) await signInAs(context, SEEDED[who], baseURL!);
    const page = await context.newPage();
    const errors = collectErrors(page);
    const response = await page.goto(path);
    expect(response?.headers()["content-security-policy"]).toContain("'nonce-");
    await page.waitForLoadState("networkidle");
    // Hydrated: a client component reacts (the sign-in link or the signed-in person's sign-out button).
    await expect(page.getByRole(who ? "button" : "link", { name: who ? "Sign out" : "Sign in" }).first()).toBeVisible();
    expect(errors).toEqual([]);
    await context.close();
  });
}

test("the app cannot be framed", async ({ page, baseURL }) => {
  const errors = collectErrors(page);
  await page.setContent(`<iframe src="${baseURL}/login" id="frame"></iframe>`);
  await expect
    .poll(() => errors.join("\n"))
    .toMatch(/frame-ancestors|X-Frame-Options|refused to connect|Refused to display/i);
  const frame = page.frames().find((candidate) => candidate.url().includes("/login"));
  expect(
    (await frame
      ?.locator("h1")
      .count()
      .catch(() => 0)) ?? 0,
  ).toBe(0);
});

test("after a lock the login page says when to try again, for a real account and an unknown one alike", async ({
  page,
}) => {
  // A clean count, also when a first try of this test was cut short by a slow machine.
  await database().query(`DELETE FROM "SignInThrottle"`);
  const errors = collectErrors(page);
  const alert = page.locator("p[role=alert]");
  const attemptsUntilLocked: number[] = [];
  for (const email of [SEEDED.globexSupervisor.email, "nobody@globex.test"]) {
    await page.goto("/login");
    let attempts = 0;
    let text = "";
    // Three failures are free; the fourth locks for 2 s, so the fifth (or, on a slow machine, the sixth) is refused.
    while (attempts < 8 && !text.startsWith("Too many")) {
      attempts++;
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill("wrong-password");
      const answered = page.waitForResponse((response) => response.url().includes("/api/auth/callback/credentials"));
      await page.getByRole("button", { name: "Sign in" }).click();
      await answered;
      await expect(page.getByRole("button", { name: "Sign in" })).toBeEnabled();
      // Busy, the button kept keyboard focus: Enter tries again from where the person was.
      await expect(page.getByRole("button", { name: "Sign in" })).toBeFocused();
      text = (await alert.textContent()) ?? "";
    }
    expect(text).toMatch(
      /^Too many sign-in attempts\. Try again in \d+ (seconds?|minutes?) \(after \d{4}-\d\d-\d\d \d\d:\d\d UTC\)\.$/,
    );
    attemptsUntilLocked.push(attempts);
  }
  expect(attemptsUntilLocked[0]).toBeGreaterThan(3);
  expect(attemptsUntilLocked[1]).toBeGreaterThan(3);
  // The browser reports the refused post's 429 (and each wrong password's 401); nothing else may show.
  expect(errors.filter((error) => !/\b(401|429)\b/.test(error))).toEqual([]);
  await database().query(`DELETE FROM "SignInThrottle"`);
});
