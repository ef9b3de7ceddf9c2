import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { expectUsable, shoot, VIEWPORTS } from "../fixtures";
import { database, SEEDED, signInAs } from "../support";

// The Connections page (issue 40, decision 022): the support agent's Claude connection, the customer it works on,
// and a switch in one click, by mouse at 1280 px and by keyboard on a phone; each switch lands in the audit log.

/** A live OAuth connection of the seeded agent, as a consent makes it (its own key row, no customer chosen). */
async function connection(clientName: string): Promise<string> {
  const suffix = randomBytes(6).toString("hex");
  const client = `https://${suffix}.client.example/oauth.json`;
  const key = `key_e2e_${suffix}`;
  const grant = `grant_e2e_${suffix}`;
  const db = database();
  await db.query(`INSERT INTO "OAuthClient" (id, kind, name, "redirectUris") VALUES ($1, 'cimd', $2, $3)`, [
    client,
    clientName,
    ["https://claude.ai/api/mcp/auth_callback"],
  ]);
  await db.query(`INSERT INTO "ApiKey" (id, "tenantId", "userId", prefix, hash) VALUES ($1, 'acme', $2, 'tg_oa', $3)`, [
    key,
    SEEDED.agent.id,
    `e2e-${suffix}`,
  ]);
  await db.query(
    `INSERT INTO "OAuthGrant" (id, "tenantId", "agentId", "clientId", "apiKeyId", scopes, "redirectUri", "grantedById")
     VALUES ($1, 'acme', $2, $3, $4, $5, 'https://claude.ai/api/mcp/auth_callback', $2)`,
    [grant, SEEDED.agent.id, client, key, ["orders:read", "refunds:write"]],
  );
  return grant;
}

const workingOn = async (grant: string) =>
  (
    await database().query<{ email: string | null }>(
      `SELECT cu.email FROM "OAuthGrant" g LEFT JOIN "Conversation" c ON c.id = g."workingConversationId"
       LEFT JOIN "Customer" cu ON cu.id = c."customerId" WHERE g.id = $1`,
      [grant],
    )
  ).rows[0].email;

for (const viewport of VIEWPORTS) {
  test(`the support agent switches their Claude connection between customers (${viewport.name})`, async ({
    page,
    context,
    baseURL,
  }) => {
    await page.setViewportSize(viewport);
    await database().query(`UPDATE "OAuthGrant" SET "revokedAt" = now() WHERE "agentId" = $1 AND "revokedAt" IS NULL`, [
      SEEDED.agent.id,
    ]);
    await signInAs(context, SEEDED.agent, baseURL!);
    // Nothing connected yet: the page says what to paste, where.
    await page.goto("/connections");
    await expect(page.getByTestId("connections-url")).toHaveText(`${baseURL}/api/mcp`);
    await expectUsable(page, "Your connections");
    if (viewport.name === "desktop") await shoot(page, "connections-empty");

    const grant = await connection("Claude");
    await page.reload();
    const card = page.getByTestId("connection");
    await expect(card.getByRole("heading", { name: "Claude" })).toBeVisible();
    await expect(card.getByTestId("working-on")).toHaveText(/No customer chosen yet/);
    await expectUsable(page, "Your connections");
    if (viewport.name === "desktop") await shoot(page, "connections-none");

    const search = card.getByRole("searchbox", { name: "Switch to a customer" });
    if (viewport.name === "desktop") {
      await search.fill("ana");
      await card.getByRole("button", { name: "Work on ana@example.test" }).click();
    } else {
      await search.focus();
      await page.keyboard.type("ana");
      await expect(card.getByRole("button", { name: "Work on ana@example.test" })).toBeVisible();
      await page.keyboard.press("Tab");
      await expect(card.getByRole("button", { name: "Work on ana@example.test" })).toBeFocused();
      await page.keyboard.press("Enter");
    }
    await expect(card.getByTestId("working-on")).toHaveText("Working on ana@example.test (its conversation)");
    expect(await workingOn(grant)).toBe("ana@example.test");
    await expectUsable(page, "Your connections");
    if (viewport.name === "desktop") await shoot(page, "connections-working-on");

    await search.fill("ben");
    await card.getByRole("button", { name: "Work on ben@example.test" }).click();
    await expect(card.getByTestId("working-on")).toHaveText("Working on ben@example.test (its conversation)");
    expect(await workingOn(grant)).toBe("ben@example.test");
    const { rows } = await database().query<{ actor: string }>(
      `SELECT "actorId" AS actor FROM "AuditLog" WHERE action = 'connection.customer-switched' AND detail ->> 'grantId' = $1`,
      [grant],
    );
    expect(rows).toEqual([{ actor: SEEDED.agent.id }, { actor: SEEDED.agent.id }]);

    // Ben's conversation says which connection works on him, and who switched it there.
    await card.getByRole("link", { name: "its conversation" }).click();
    await expect(page.getByTestId("conversation-switches")).toContainText(
      "Claude started working on this customer, switched by Ada Agent",
    );
    await expectUsable(page, "Conversation");
  });
}
