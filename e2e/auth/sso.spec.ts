import { expect, test } from "@playwright/test";
import { encryptSecret } from "../../lib/security/secrets";
import { startTestProvider, type TestProvider } from "../../tests/support/oidc-provider";
import { createHash, randomBytes } from "node:crypto";
import {
  addVirtualPasskey,
  askedRefund,
  authorizeUrl,
  emailedLinkPath,
  expectUsable,
  registerClient,
  shoot,
} from "../fixtures";
import { database, SEEDED, signedInPage } from "../support";

// Single sign-on in the browser: a supervisor of a tenant that requires it signs in through a real OpenID provider
// started here (oidc-provider, its own login and consent pages), is told their password cannot confirm a large
// approval, adds a first passkey from that fresh sign-in, approves the held refund with it (the provider proves who
// signed in, not who approves this refund now), and signs out, which ends the toolgate session.

const OIDC_PORT = Number(process.env.E2E_OIDC_PORT ?? "3219");
// The key scripts/e2e-server.ts gives the server, so the client secret stored here opens there.
const SECRETS_KEY = process.env.SECRETS_KEY ?? Buffer.from("e2e-only-secrets-key-32-bytes!!!").toString("base64");
const SUB = "globex-supervisor-at-the-provider";
let provider: TestProvider;

test.beforeAll(async ({ baseURL }) => {
  provider = await startTestProvider({ port: OIDC_PORT, redirectUris: [`${baseURL}/api/sso/callback`] });
  provider.accounts.set(SUB, { email: SEEDED.globexSupervisor.email, emailVerified: true, name: "Globex supervisor" });
  process.env.SECRETS_KEY = SECRETS_KEY;
  const secret = encryptSecret(provider.clientSecret, "TenantSso.clientSecret:globex");
  await database().query(
    `INSERT INTO "TenantSso" ("tenantId", "displayName", "issuer", "clientId", "clientSecret", "emailDomain", "required")
     VALUES ('globex', 'Globex ID', $1, $2, $3, 'globex.test', true)`,
    [provider.issuer, provider.clientId, secret],
  );
  await database().query(`UPDATE "Tenant" SET "stepUpAboveCents" = 1000 WHERE id = 'globex'`);
  await database().query(`DELETE FROM "Passkey" WHERE "userId" = $1`, [SEEDED.globexSupervisor.id]);
});

test.afterAll(async () => {
  await database().query(`DELETE FROM "SsoIdentity" WHERE "tenantId" = 'globex'`);
  await database().query(`DELETE FROM "TenantSso" WHERE "tenantId" = 'globex'`);
  await database().query(`DELETE FROM "Passkey" WHERE "userId" = $1`, [SEEDED.globexSupervisor.id]);
  await database().query(`UPDATE "Tenant" SET "stepUpAboveCents" = 10000 WHERE id = 'globex'`);
  await provider?.close();
});

test("a supervisor signs in through the company's OpenID provider, approves a held refund with a passkey, and signs out", async ({
  browser,
  baseURL,
  request,
}) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  // The sign-in page finds the tenant by the email's domain (a link `/login?sso=globex` shows the same button).
  await page.goto("/login?next=/settings");
  await page.getByRole("link", { name: "Use your company's single sign-on" }).click();
  await page.getByLabel("Work email").fill(SEEDED.globexSupervisor.email);
  await page.getByRole("button", { name: "Find my company's sign-in" }).click();
  await expectUsable(page, "Single sign-on");
  await shoot(page, "sso-sign-in");
  await page.getByRole("link", { name: "Sign in with Globex ID" }).click();

  // The provider's own pages: its sign-in, then its consent.
  await expect(page).toHaveURL(new RegExp(`^${provider.issuer}/interaction/`));
  await page.locator('input[name="login"]').fill(SUB);
  await page.locator('input[name="password"]').fill("anything-the-provider-accepts");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();

  await expect(page).toHaveURL(`${baseURL}/settings`);
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
  const bound = await database().query(`SELECT "userId", "boundBy" FROM "SsoIdentity" WHERE "subject" = $1`, [SUB]);
  expect(bound.rows).toEqual([{ userId: SEEDED.globexSupervisor.id, boundBy: "verified-email" }]);
  const sessions = await database().query<{ id: string }>(
    `SELECT id FROM "Session" WHERE "userId" = $1 AND "endedAt" IS NULL ORDER BY "createdAt" DESC LIMIT 1`,
    [SEEDED.globexSupervisor.id],
  );
  const sessionId = sessions.rows[0].id;
  const via = await database().query(`SELECT "signedInVia" FROM "Session" WHERE id = $1`, [sessionId]);
  expect(via.rows).toEqual([{ signedInVia: "sso" }]);

  // WebAuthn refuses an IP address as the relying party: the app names itself localhost on the loopback address, so
  // the session this sign-in made is carried there (the same cookie, for the other name of the same server).
  const local = baseURL!.replace("127.0.0.1", "localhost");
  const [session] = (await context.cookies(baseURL)).filter((cookie) => cookie.name === "next-auth.session-token");
  await context.addCookies([{ name: session.name, value: session.value, url: local, httpOnly: true, sameSite: "Lax" }]);
  const { order, answer: held } = await askedRefund(request, {
    customer: "cu_gil",
    amount: 6000,
    key: `sso`,
    totalCents: 50000,
    tenant: "globex",
  });
  expect(held.kind).toBe("pending_approval");
  const card = page.locator(`[data-testid="approval-item"][data-approval-id="${held.approval!.id}"]`);
  const dialog = page.getByTestId("decide-dialog");
  // Without a passkey the dialog says what confirms a large approval here, rather than asking for the password.
  await page.goto(`${local}/approvals?q=${order}`);
  await card.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(dialog.getByTestId("step-up-passkey-needed")).toContainText(
    "your organization signs you in through Globex ID, so a passkey confirms this, not your password.",
  );
  await expect(dialog.getByRole("button", { name: "Confirm approval" })).toBeDisabled();
  await shoot(page, "sso-passkey-needed");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  // The emailed link's page says the same in its confirmation, and offers nothing to type.
  const link = `${local}${await emailedLinkPath(SEEDED.globexSupervisor.email, held.approval!.id)}`;
  await page.goto(link);
  await page.getByRole("button", { name: "Approve…" }).click();
  await expect(page.getByTestId("link-passkey-needed")).toContainText(
    "your organization signs you in through Globex ID, so a passkey confirms this, not your password.",
  );
  await expect(page.getByLabel("Your password, to confirm it is you")).toHaveCount(0);
  await expect(page.getByRole("button", { name: /^Confirm/ })).toHaveCount(0);
  await expectUsable(page);
  await shoot(page, "sso-link-passkey-needed");
  const pending = await database().query(`SELECT status FROM "ApprovalRequest" WHERE id = $1`, [held.approval!.id]);
  expect(pending.rows).toEqual([{ status: "pending" }]);

  // A first passkey only within 10 minutes of a sign-in through the provider: an older session is sent back to it.
  await database().query(`UPDATE "Session" SET "createdAt" = now() - interval '11 minutes' WHERE id = $1`, [sessionId]);
  await page.goto(`${local}/settings`);
  await expect(page.getByTestId("passkey-sign-in-again")).toContainText("sign in again through Globex ID");
  await expect(page.getByRole("link", { name: "Sign in again through Globex ID" })).toHaveAttribute(
    "href",
    "/api/sso/start?tenant=globex&next=/settings",
  );
  await expect(page.getByRole("button", { name: "Add a passkey" })).toBeDisabled();
  await expectUsable(page, "Your settings");
  await database().query(`UPDATE "Session" SET "createdAt" = now() WHERE id = $1`, [sessionId]);

  await addVirtualPasskey(page);
  await page.goto(`${local}/settings`);
  await page.getByLabel("Name of the new passkey").fill("SSO laptop");
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await page.getByTestId("passkey-password").fill("toolgate-demo");
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByTestId("passkeys")).toContainText("SSO laptop");

  // With it, the link's page asks for one touch and approves.
  await page.goto(link);
  await page.getByRole("button", { name: "Approve…" }).click();
  await expect(page.getByTestId("step-up-passkey")).toHaveText(
    "Above 10.00 USD: one touch of your passkey signs this approval.",
  );
  await page.getByRole("button", { name: "Confirm with passkey and approve" }).click();
  await expect(page.getByTestId("link-result")).toHaveText(`60.00 USD refund on ${order} approved; refund issued.`);
  // And the desk's dialog signs with it.
  const second = await askedRefund(request, {
    customer: "cu_gil",
    amount: 6000,
    key: `sso-desk`,
    totalCents: 50000,
    tenant: "globex",
  });
  await page.goto(`${local}/approvals?q=${second.order}`);
  await page
    .locator(`[data-testid="approval-item"][data-approval-id="${second.answer.approval!.id}"]`)
    .getByRole("button", { name: "Approve", exact: true })
    .click();
  await dialog.getByRole("button", { name: "Confirm with passkey and approve" }).click();
  await expect(page.getByTestId("toast")).toHaveText(`60.00 USD refund on ${second.order} approved`);
  const decided = await database().query(
    `SELECT status, "stepUpMethod", "decidedById" FROM "ApprovalRequest" WHERE id = ANY($1) ORDER BY "createdAt"`,
    [[held.approval!.id, second.answer.approval!.id]],
  );
  expect(decided.rows).toEqual(
    [1, 2].map(() => ({ status: "approved", stepUpMethod: "passkey", decidedById: SEEDED.globexSupervisor.id })),
  );

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);
  const ended = await database().query(`SELECT "endedAt", "endedReason" FROM "Session" WHERE id = $1`, [sessionId]);
  expect(ended.rows[0].endedReason).toBe("signed-out");
  await page.goto(`${baseURL}/approvals`);
  await expect(page).toHaveURL(/\/login/);
  await context.close();
});

test("an agent of the tenant is told a passkey, not the password, passes refunds on, and can allow the rest", async ({
  browser,
  baseURL,
}) => {
  await database().query(`UPDATE "Tenant" SET "oauthDcrEnabled" = true WHERE id = 'globex'`);
  try {
    const clientId = await registerClient(baseURL!, `Globex desk ${randomBytes(3).toString("hex")}`);
    const challenge = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url");
    const { context, page } = await signedInPage(browser, SEEDED.globexAgent, baseURL!);
    await page.route("http://127.0.0.1:4799/**", (route) => route.fulfill({ status: 200, body: "back in the client" }));
    await page.goto(authorizeUrl(baseURL!, clientId, challenge));
    await expect(page.getByTestId("consent-passkey-needed")).toContainText(
      "your organization signs you in through Globex ID, so a passkey confirms this, not your password.",
    );
    await expect(page.getByTestId("consent-password")).toHaveCount(0);
    await expectUsable(page);
    await shoot(page, "sso-consent-passkey-needed");
    await page.getByRole("button", { name: "Allow" }).click();
    await expect(page.getByText("Add a passkey under Settings first", { exact: false })).toHaveText(
      'Add a passkey under Settings first, or untick "Propose refunds" to allow the rest without it.',
    );
    await page.getByLabel("Propose refunds", { exact: false }).uncheck();
    await expect(page.getByTestId("consent-passkey-needed")).toHaveCount(0);
    const sent = page.waitForRequest(/127\.0\.0\.1:4799\/callback/);
    await page.getByRole("button", { name: "Allow" }).click();
    expect(new URL((await sent).url()).searchParams.get("code")).toBeTruthy();
    const { rows } = await database().query<{ scopes: string[] }>(
      `SELECT "scopes" FROM "OAuthGrant" WHERE "clientId" = $1`,
      [clientId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].scopes).not.toContain("refunds:write");
    await context.close();
  } finally {
    await database().query(`UPDATE "Tenant" SET "oauthDcrEnabled" = false WHERE id = 'globex'`);
  }
});

test("an admin sees the tenant's provider, never its secret, and can invite a person by their ID there", async ({
  browser,
  baseURL,
}) => {
  const secret = encryptSecret("acme-client-secret-never-shown", "TenantSso.clientSecret:acme");
  await database().query(
    `INSERT INTO "TenantSso" ("tenantId", "displayName", "issuer", "clientId", "clientSecret", "emailDomain")
     VALUES ('acme', 'Acme ID', $1, 'acme-client', $2, 'acme.test')`,
    [provider.issuer, secret],
  );
  try {
    const { context, page } = await signedInPage(browser, SEEDED.admin, baseURL!);
    await page.goto("/admin/policy");
    await expect(page.getByLabel("Issuer URL (https://)")).toHaveValue(provider.issuer);
    await expect(page.getByLabel("Client secret")).toHaveValue("");
    expect(await page.content()).not.toContain("acme-client-secret-never-shown");
    await expect(page.getByRole("group", { name: "Invite a person by their ID at the provider" })).toBeVisible();
    await expectUsable(page, "Policy and keys");
    // Ticked (not saved), the form says before anything is saved that password sessions end, the admin's too.
    await page.getByLabel("Require single sign-on", { exact: false }).check();
    await expect(page.getByText("everyone signed in with a password is signed out", { exact: false })).toBeVisible();
    await context.close();
  } finally {
    await database().query(`DELETE FROM "TenantSso" WHERE "tenantId" = 'acme'`);
  }
});
