import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { agentConversation } from "../support/calls";
import { listToolsWith, oauthRouteFetch } from "../support/oauth";
import { agentSession, connect, ISSUER, refreshWith, type Tokens } from "../support/oauth-grant";
import { signedIn } from "../support/signed-in";
import { createWorld } from "../support/world";

// Refresh the way hosted clients do (issue 34): they refresh from several workers at once, so a rotated refresh
// token keeps answering for a short grace window with the pair its rotation issued; outside the window a second
// use is still taken as theft and ends the connection.

vi.mock("@/lib/auth/sign-in/auth", async () => (await import("../support/signed-in")).signedInMock());
vi.mock("@/lib/oauth/clients/fetch-document", async () => (await import("../support/cimd-fetcher")).cimdFetcherMock());

beforeAll(() => {
  process.env.NEXTAUTH_SECRET = "oauth-tests-signing-secret";
});
beforeEach(() => {
  signedIn.user = null;
});

async function connected() {
  const w = await createWorld();
  const conversation = await agentConversation(w);
  signedIn.user = agentSession(w);
  const tokens = await connect(["orders:read", "refunds:write"]);
  const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: w.tenantId } });
  return { w, conversation, tokens, grant };
}

const bodyOf = async (response: Response) => ({ status: response.status, body: (await response.json()) as Tokens });

describe("refresh token rotation with a grace window", () => {
  it("parallel refreshes with one token within the window all get the same current pair and keep the connection", async () => {
    const { w, conversation, tokens, grant } = await connected();
    const answers = await Promise.all([1, 2, 3, 4].map(() => refreshWith(tokens.refresh_token).then(bodyOf)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const rotated = new Set(answers.map((answer) => answer.body.refresh_token));
    expect(rotated.size).toBe(1);
    const [current] = rotated;
    expect(current).not.toBe(tokens.refresh_token);
    // One rotation happened: the first token used, one new family member, the grant live.
    expect(await db.oAuthRefreshToken.count({ where: { grantId: grant.id } })).toBe(2);
    expect(await db.oAuthRefreshToken.count({ where: { grantId: grant.id, usedAt: null } })).toBe(1);
    expect((await db.oAuthGrant.findUniqueOrThrow({ where: { id: grant.id } })).revokedAt).toBeNull();
    for (const answer of answers)
      expect((await listToolsWith(oauthRouteFetch, ISSUER, conversation, answer.body.access_token)).status).toBe(200);
    // The pair the window gave out is the current one: it rotates as usual.
    const next = await bodyOf(await refreshWith(current!));
    expect(next.status).toBe(200);
    expect(next.body.refresh_token).not.toBe(current);
    expect(await db.auditLog.count({ where: { tenantId: w.tenantId, action: "oauth.revoked" } })).toBe(0);
  });

  it("the previous token after the window, or once its successor rotated too, revokes the connection", async () => {
    const { w, conversation, tokens, grant } = await connected();
    const rotated = await bodyOf(await refreshWith(tokens.refresh_token));
    expect(rotated.status).toBe(200);
    // The rotation was 31 seconds ago: past the 30-second window.
    await db.oAuthRefreshToken.updateMany({
      where: { grantId: grant.id, usedAt: { not: null } },
      data: { usedAt: new Date(Date.now() - 31_000) },
    });
    const reused = await refreshWith(tokens.refresh_token);
    expect(reused.status).toBe(400);
    expect(await reused.json()).toMatchObject({ error: "invalid_grant" });
    expect((await db.oAuthGrant.findUniqueOrThrow({ where: { id: grant.id } })).revokedReason).toBe(
      "refresh-token-reused",
    );
    expect((await refreshWith(rotated.body.refresh_token)).status).toBe(400);
    expect((await listToolsWith(oauthRouteFetch, ISSUER, conversation, rotated.body.access_token)).status).toBe(401);
    expect(await db.auditLog.count({ where: { tenantId: w.tenantId, action: "oauth.revoked" } })).toBe(1);

    // Within the window, but the pair it would give is no longer the current one: a theft, not a race.
    const second = await connected();
    const first = await bodyOf(await refreshWith(second.tokens.refresh_token));
    expect((await refreshWith(first.body.refresh_token)).status).toBe(200);
    const late = await refreshWith(second.tokens.refresh_token);
    expect(late.status).toBe(400);
    expect((await db.oAuthGrant.findUniqueOrThrow({ where: { id: second.grant.id } })).revokedReason).toBe(
      "refresh-token-reused",
    );
  });
});
