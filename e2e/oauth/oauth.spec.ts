import { createHash, randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { database, SEEDED, signedInPage } from "../support";
import { authorizeUrl, expectUsable, registerClient, shoot, VIEWPORTS } from "../fixtures";

// MCP authorization as people meet it: in a tenant that allows self-registered clients, an agent grants a client on
// the consent page (unticking one permission), and the admin sees and revokes the connection.

for (const viewport of VIEWPORTS) {
  test(`an agent connects a client on the consent page and an admin revokes it (${viewport.name})`, async ({
    browser,
    baseURL,
  }) => {
    const size = { viewport: { width: viewport.width, height: viewport.height } };
    const { context: admin, page: adminPage } = await signedInPage(browser, SEEDED.admin, baseURL!, size);
    // Allowing self-registered clients takes the admin's step-up and a second admin's approval (the two-admin rule,
    // tests/admin/admin-changes.integration.test.ts); here the tenant is as it is once that change applied.
    await database().query(`UPDATE "Tenant" SET "oauthDcrEnabled" = true WHERE "id" = 'acme'`);
    await adminPage.goto("/admin/policy");
    await expect(adminPage.getByLabel("Allow clients that register themselves", { exact: false })).toBeChecked();

    const name = `Cursor ${viewport.name} ${randomBytes(3).toString("hex")}`;
    const clientId = await registerClient(baseURL!, name);
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");

    const { context: agent, page } = await signedInPage(browser, SEEDED.agent, baseURL!, size);
    await page.route("http://127.0.0.1:4799/**", (route) => route.fulfill({ status: 200, body: "back in the client" }));
    await page.goto(authorizeUrl(baseURL!, clientId, challenge));
    await expect(page.getByRole("heading", { name: `Connect ${name} to toolgate` })).toBeVisible();
    await expect(page.getByText("127.0.0.1:4799", { exact: true })).toBeVisible();
    await expect(page.getByText("agent of", { exact: false })).toBeVisible();
    await expectUsable(page);
    await shoot(page, viewport.name === "phone" ? "oauth-consent-phone" : "oauth-consent");
    await page.screenshot({ path: `test-results/oauth-consent-${viewport.name}.png`, fullPage: true });
    await page.getByLabel("Send order status emails to customers", { exact: false }).uncheck();
    // Proposing refunds passes the agent's refund permission on: the page asks for the password (no passkey here).
    await page.getByTestId("consent-password").fill("toolgate-demo");
    // The answer is a redirect, which page.route does not see: read where the browser was sent.
    const sent = page.waitForRequest(/127\.0\.0\.1:4799\/callback/);
    await page.getByRole("button", { name: "Allow" }).click();
    const back = new URL((await sent).url());
    expect(back.searchParams.get("state")).toBe("e2e-state");
    expect(back.searchParams.get("iss")).toBe(baseURL);
    const { rows } = await database().query<{ id: string; scopes: string[] }>(
      `SELECT g."id", g."scopes" FROM "OAuthGrant" g WHERE g."clientId" = $1`,
      [clientId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].scopes).not.toContain("email:send");
    expect(rows[0].scopes).toContain("refunds:write");

    await adminPage.reload();
    const row = adminPage.getByTestId(`connection-${rows[0].id}`);
    await expect(row).toContainText(name);
    await expectUsable(adminPage);
    await adminPage.screenshot({ path: `test-results/oauth-admin-${viewport.name}.png`, fullPage: true });
    await row.getByRole("button", { name: `Revoke ${name}` }).click();
    await expect(row).toContainText("revoked");
    const audit = await database().query<{ action: string }>(
      `SELECT "action" FROM "AuditLog" WHERE "tenantId" = 'acme' AND "detail"->>'grantId' = $1 ORDER BY "id"`,
      [rows[0].id],
    );
    expect(audit.rows.map((entry) => entry.action)).toEqual(["oauth.granted", "oauth.revoked"]);
    await admin.close();
    await agent.close();
  });
}
