import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { expectUsable, shoot } from "../fixtures";
import { database, SEEDED, signInAs } from "../support";

// The consent page each host's person meets (docs/CONNECT.md, issue 34): the host's own metadata document (the
// fixtures in tests/fixtures/cimd), known to the server as a fetched document is, its own redirect URI, and the
// person's Allow sending the code back there. The documents' fetching and each host's token step are proved by
// tests/oauth/hosts.integration.test.ts and tests/hardening/oauth.test.ts; this is what the person sees.

const HOSTS = ["claude", "claude-code", "chatgpt", "vscode", "goose"] as const;

interface HostDocument {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: string;
  jwks_uri?: string;
}

const documentOf = (host: string): HostDocument =>
  JSON.parse(readFileSync(path.join("tests", "fixtures", "cimd", `${host}.json`), "utf8")) as HostDocument;

for (const host of HOSTS) {
  test(`${host}: its person grants it on the consent page and the code goes back to its redirect URI`, async ({
    page,
    context,
    baseURL,
  }) => {
    const document = documentOf(host);
    const method = document.token_endpoint_auth_method === "private_key_jwt" ? "private_key_jwt" : "none";
    // As a fetch leaves it: the document's client, fetched just now and kept for an hour (the cache), so no host is
    // reached from here.
    await database().query(
      `INSERT INTO "OAuthClient" (id, kind, name, "redirectUris", "fetchedAt", "cacheUntil", "authMethod", "jwksUri")
       VALUES ($1, 'cimd', $2, $3, now(), now() + interval '1 hour', $4, $5)
       ON CONFLICT (id) DO UPDATE SET "fetchedAt" = now(), "cacheUntil" = now() + interval '1 hour'`,
      [document.client_id, document.client_name, document.redirect_uris, method, document.jwks_uri ?? null],
    );
    const redirect = document.redirect_uris[0];
    await page.route(`${new URL(redirect).origin}/**`, (route) =>
      route.fulfill({ status: 200, body: "back in the host" }),
    );
    await signInAs(context, SEEDED.agent, baseURL!);
    const challenge = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url");
    await page.goto(
      `/oauth/authorize?${new URLSearchParams({
        response_type: "code",
        client_id: document.client_id,
        redirect_uri: redirect,
        code_challenge: challenge,
        code_challenge_method: "S256",
        state: `state-${host}`,
        scope: "orders:read refunds:write",
        resource: `${baseURL}/api/mcp`,
      })}`,
    );
    await expect(page.getByRole("heading", { name: `Connect ${document.client_name} to toolgate` })).toBeVisible();
    await expect(page.getByText(document.client_id, { exact: false }).first()).toBeVisible();
    await expectUsable(page);
    await shoot(page, `consent-${host}`);
    // Proposing refunds passes the agent's refund permission on: the page asks for the password (no passkey here).
    await page.getByTestId("consent-password").fill("toolgate-demo");
    const sent = page.waitForRequest((request) => request.url().startsWith(redirect));
    await page.getByRole("button", { name: "Allow" }).click();
    const back = new URL((await sent).url());
    expect(back.searchParams.get("state")).toBe(`state-${host}`);
    expect(back.searchParams.get("code")).toBeTruthy();
    const { rows } = await database().query<{ scopes: string[] }>(
      `SELECT scopes FROM "OAuthGrant" WHERE "clientId" = $1 ORDER BY "createdAt" DESC LIMIT 1`,
      [document.client_id],
    );
    expect(rows[0].scopes).toEqual(["orders:read", "refunds:write"]);
  });
}
