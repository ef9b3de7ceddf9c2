import { beforeAll, describe, expect, it, vi } from "vitest";
import { approveChange } from "@/lib/admin/changes/two-admin";
import { tenantPolicy } from "@/lib/admin/policy/numbers";
import { displayValue, POLICY_FIELDS } from "@/lib/admin/policy/fields";
import { setRefundPermission } from "@/lib/admin/access/refund-permission";
import { changeOwnPassword } from "@/lib/auth/sign-in/password-change";
import { db } from "@/lib/db";
import {
  ownConnections,
  revokeConnection,
  revokeOwnConnection,
  tenantConnections,
} from "@/lib/oauth/consent/connections";
import { propose } from "../support/api";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { agentConversation, refundArguments, supervisorOf } from "../support/calls";
import { listToolsWith, oauthRouteFetch } from "../support/oauth";
import {
  agentSession,
  connect,
  consent,
  delegationProof,
  ISSUER,
  mcpRequest,
  refreshWith,
} from "../support/oauth-grant";
import { signedIn } from "../support/signed-in";
import { noProof, provedFor, sessionOf, STEP_UP_PASSWORD } from "../support/step-up";
import { addPerson, createWorld, type World } from "../support/world";

// A connection a person controls (issue 34): passing the refund permission to a client takes a fresh step-up proof,
// is audited and emailed like a new key; the person and the admin both see and revoke it; refresh tokens lapse; a
// change to the person ends their connections; and the rate limits are one per agent however many it has.

vi.mock("@/lib/auth/sign-in/auth", async () => (await import("../support/signed-in")).signedInMock());
vi.mock("@/lib/oauth/clients/fetch-document", async () => (await import("../support/cimd-fetcher")).cimdFetcherMock());
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
const { updatePolicyAction } = await import("@/lib/admin/policy/actions");

beforeAll(() => {
  process.env.NEXTAUTH_SECRET = "oauth-tests-signing-secret";
});

const BOTH = ["orders:read", "refunds:write"];
const grantsOf = (w: World) =>
  db.oAuthGrant.findMany({ where: { tenantId: w.tenantId }, orderBy: { createdAt: "asc" } });
const outbox = (w: World) =>
  db.outboxMessage.findMany({
    where: { tenantId: w.tenantId, kind: "oauth_refunds_delegated" },
    orderBy: { id: "asc" },
  });

async function signedInWorld() {
  const w = await createWorld();
  signedIn.user = agentSession(w);
  return w;
}

describe("passing the refund permission to a client", () => {
  it("a consent without a fresh proof gets no refunds:write; with one it does, audited and emailed like a new key", async () => {
    const w = await signedInWorld();
    // No proof: everything chosen but the refund permission; refunds alone is refused and grants nothing.
    const without = await connect(BOTH, {}, false);
    expect(without.scope).toBe("orders:read");
    const alone = await consent(["refunds:write"], {}, false);
    expect(alone.status).toBe(403);
    expect(await alone.text()).toMatch(/passkey or password/);
    // A proof made for another authorization request (another PKCE challenge) does not cover this one.
    const other = await delegationProof("https://client.example/oauth/client.json", "x".repeat(43));
    expect((await connect(BOTH, { step_up_proof: other }, false)).scope).toBe("orders:read");
    expect(await outbox(w)).toEqual([]);

    const granted = await connect(BOTH);
    expect(granted.scope).toBe("orders:read refunds:write");
    const grants = await grantsOf(w);
    expect(grants.map((grant) => grant.scopes)).toEqual([["orders:read"], ["orders:read"], BOTH]);
    const audit = await db.auditLog.findMany({ where: { tenantId: w.tenantId, action: "oauth.granted" } });
    expect(audit.map((row) => (row.detail as { stepUp?: string }).stepUp)).toEqual([undefined, undefined, "password"]);
    const agent = await db.user.findUniqueOrThrow({ where: { id: w.users.agent } });
    const admin = await db.user.findUniqueOrThrow({ where: { id: w.users.admin } });
    const mail = await outbox(w);
    expect(mail.map((message) => message.recipient).sort()).toEqual([admin.email, agent.email].sort());
    expect(mail[0]).toMatchObject({ subject: expect.stringContaining("may now propose refunds") });
    expect(mail[0].body).toContain(grants[2].id);
  });

  it("a proof is used once: a second consent with it gets no refunds:write", async () => {
    const w = await signedInWorld();
    const proof = await delegationProof(
      "https://client.example/oauth/client.json",
      "WrHlyGZTXKrfARMf6ggFndo_BRsga1GAB6KE6asQmhk",
    );
    expect((await connect(BOTH, { step_up_proof: proof }, false)).scope).toBe("orders:read refunds:write");
    expect((await connect(BOTH, { step_up_proof: proof }, false)).scope).toBe("orders:read");
    expect(await outbox(w)).toHaveLength(2);
  });
});

describe("the person's own connections", () => {
  it("the person lists and revokes their own; an admin sees and revokes any; neither reaches another's", async () => {
    const w = await signedInWorld();
    const conversation = await agentConversation(w);
    const first = await connect(["orders:read"]);
    const second = await connect(["orders:read"]);
    const [mine1, mine2] = await grantsOf(w);
    const own = await ownConnections({ id: w.users.agent, tenantId: w.tenantId });
    expect(own.map((row) => row.id).sort()).toEqual([mine1.id, mine2.id].sort());
    expect(await ownConnections({ id: w.users.agent2, tenantId: w.tenantId })).toEqual([]);
    expect(await revokeOwnConnection({ id: w.users.agent2, tenantId: w.tenantId }, mine1.id)).toBe(false);

    expect(await revokeOwnConnection({ id: w.users.agent, tenantId: w.tenantId }, mine1.id)).toBe(true);
    expect((await listToolsWith(oauthRouteFetch, ISSUER, conversation, first.access_token)).status).toBe(401);
    expect((await refreshWith(first.refresh_token)).status).toBe(400);
    expect((await db.oAuthGrant.findUniqueOrThrow({ where: { id: mine1.id } })).revokedReason).toBe(
      "revoked-by-person",
    );
    const { connections } = await tenantConnections(w.tenantId);
    expect(connections.find((row) => row.id === mine1.id)?.revokedAt).not.toBeNull();
    expect(await revokeConnection({ id: w.users.admin, tenantId: w.tenantId }, mine2.id)).toBe(true);
    expect((await listToolsWith(oauthRouteFetch, ISSUER, conversation, second.access_token)).status).toBe(401);
    const audit = await db.auditLog.findMany({ where: { tenantId: w.tenantId, action: "oauth.revoked" } });
    expect(audit.map((row) => [row.actorId, (row.detail as { reason: string }).reason])).toEqual([
      [w.users.agent, "revoked-by-person"],
      [w.users.admin, "revoked-by-admin"],
    ]);
  });
});

describe("what ends a connection", () => {
  it("a password change ends every connection of the person: its tokens stop at once", async () => {
    const w = await signedInWorld();
    const conversation = await agentConversation(w);
    const tokens = await connect(BOTH);
    expect((await listToolsWith(oauthRouteFetch, ISSUER, conversation, tokens.access_token)).status).toBe(200);
    const agent = await db.user.findUniqueOrThrow({ where: { id: w.users.agent } });
    const changed = await changeOwnPassword(
      agent,
      "ses_password_change_test",
      STEP_UP_PASSWORD,
      "a-brand-new-password-2026",
    );
    expect(changed.kind).toBe("changed");
    expect((await listToolsWith(oauthRouteFetch, ISSUER, conversation, tokens.access_token)).status).toBe(401);
    expect((await refreshWith(tokens.refresh_token)).status).toBe(400);
    const [grant] = await grantsOf(w);
    expect(grant.revokedReason).toBe("password-changed");
  });

  it("losing the refund permission ends the connections that may propose refunds; deactivation ends the rest", async () => {
    const w = await signedInWorld();
    const conversation = await agentConversation(w);
    const refunds = await connect(BOTH);
    const reads = await connect(["orders:read"]);
    const admin = { id: w.users.admin, tenantId: w.tenantId };
    expect(await setRefundPermission(admin, w.users.agent, false, await noProof(w.users.admin))).toBe("changed");
    expect((await listToolsWith(oauthRouteFetch, ISSUER, conversation, refunds.access_token)).status).toBe(401);
    expect((await listToolsWith(oauthRouteFetch, ISSUER, conversation, reads.access_token)).status).toBe(200);
    expect((await grantsOf(w)).map((grant) => grant.revokedReason)).toEqual(["refunds-withdrawn", null]);
    await db.user.update({ where: { id: w.users.agent }, data: { active: false } });
    expect((await grantsOf(w)).map((grant) => grant.revokedReason)).toEqual(["refunds-withdrawn", "deactivated"]);
    expect((await refreshWith(reads.refresh_token)).status).toBe(400);
    // Each is in the tenant's audit log as a revocation is, whatever path changed the person.
    const grants = await grantsOf(w);
    const audited = await db.auditLog.findMany({
      where: { tenantId: w.tenantId, action: "oauth.revoked" },
      orderBy: { id: "asc" },
    });
    expect(audited.map((row) => [row.actorId, row.detail])).toEqual(
      grants.map((grant) => [
        "(change to the person)",
        { grantId: grant.id, agentId: w.users.agent, clientId: grant.clientId, reason: grant.revokedReason },
      ]),
    );
  });

  it("a refresh token unused past the tenant's idle lifetime, or a connection past its absolute one, no longer refreshes", async () => {
    const w = await signedInWorld();
    await db.tenant.update({ where: { id: w.tenantId }, data: { oauthRefreshIdleDays: 7, oauthRefreshMaxDays: 30 } });
    const idle = await connect(["orders:read"]);
    const aged = await connect(["orders:read"]);
    const fresh = await connect(["orders:read"]);
    const [idleGrant, agedGrant, freshGrant] = await grantsOf(w);
    const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);
    await db.oAuthRefreshToken.updateMany({ where: { grantId: idleGrant.id }, data: { createdAt: daysAgo(8) } });
    await db.oAuthGrant.update({ where: { id: agedGrant.id }, data: { createdAt: daysAgo(31) } });
    await db.oAuthRefreshToken.updateMany({ where: { grantId: freshGrant.id }, data: { createdAt: daysAgo(6) } });
    for (const tokens of [idle, aged]) {
      const refused = await refreshWith(tokens.refresh_token);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "invalid_grant" });
    }
    expect((await refreshWith(fresh.refresh_token)).status).toBe(200);
    expect((await grantsOf(w)).map((grant) => grant.revokedReason)).toEqual(["lapsed", "lapsed", null]);
  });
});

describe("the connection lifetimes on the admin's policy form", () => {
  const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);
  /** The refresh token of the connection made last, as if it had last been used this many days ago. */
  async function idleFor(w: World, days: number) {
    const [grant] = await db.oAuthGrant.findMany({ where: { tenantId: w.tenantId }, orderBy: { createdAt: "desc" } });
    await db.oAuthRefreshToken.updateMany({ where: { grantId: grant.id }, data: { createdAt: daysAgo(days) } });
  }
  /** The form as the policy page fills it from the tenant, with these fields retyped. */
  async function form(w: World, typed: Record<string, string>) {
    const current = await tenantPolicy(w.tenantId);
    const shown = Object.fromEntries(POLICY_FIELDS.map((spec) => [spec.name, displayValue(spec, current[spec.name])]));
    return { ...shown, ...typed } as Parameters<typeof updatePolicyAction>[0]["policy"];
  }
  async function signInAs(w: World, id: string) {
    signedIn.user = { ...agentSession(w, id), role: "ADMIN" };
    signedIn.sessionId = await sessionOf(id);
  }

  it("an admin shortens the idle lifetime: it applies at once without a step-up, and a connection idle longer no longer refreshes", async () => {
    const w = await signedInWorld();
    const before = await connect(["orders:read"]);
    await idleFor(w, 8);
    const idle = await connect(["orders:read"]);
    await idleFor(w, 8);
    const recent = await connect(["orders:read"]);
    await idleFor(w, 6);
    // Under the default 30 days, a week and a day unused still refreshes.
    expect((await refreshWith(before.refresh_token)).status).toBe(200);

    await signInAs(w, w.users.admin);
    const saved = await updatePolicyAction({ policy: await form(w, { oauthRefreshIdleDays: "7" }) });
    expect(saved).toMatchObject({ ok: true, data: { changed: true, held: null } });
    expect(await tenantPolicy(w.tenantId)).toMatchObject({ oauthRefreshIdleDays: 7, oauthRefreshMaxDays: 90 });
    const [audit] = await db.auditLog.findMany({ where: { tenantId: w.tenantId, action: "policy.updated" } });
    expect(audit.detail).toMatchObject({ before: { oauthRefreshIdleDays: 30 }, after: { oauthRefreshIdleDays: 7 } });
    expect(audit.detail).not.toHaveProperty("stepUp");

    const refused = await refreshWith(idle.refresh_token);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "invalid_grant" });
    expect((await refreshWith(recent.refresh_token)).status).toBe(200);
    expect((await grantsOf(w)).map((grant) => grant.revokedReason)).toEqual([null, "lapsed", null]);
  });

  it("raising a lifetime needs the admin's step-up and then a second admin; until approved connections lapse as before", async () => {
    const w = await signedInWorld();
    const other = await addPerson(w, `${w.users.admin}_b`, "ADMIN", "Bea Admin");
    await signInAs(w, w.users.admin);
    const longer = await form(w, { oauthRefreshIdleDays: "60" });
    expect(await updatePolicyAction({ policy: longer })).toMatchObject({
      ok: false,
      code: "step-up.required",
      message: expect.stringContaining("Connection idle lifetime (days)"),
    });
    const proof = await provedFor(w.users.admin, { kind: "admin.policy", values: longer }, signedIn.sessionId);
    const held = await updatePolicyAction({ policy: longer, proofId: proof.proofId });
    expect(held).toMatchObject({ ok: true, data: { changed: false, held: expect.stringMatching(/another admin/) } });
    expect(await tenantPolicy(w.tenantId)).toMatchObject({ oauthRefreshIdleDays: 30 });
    const [change] = await db.adminChange.findMany({ where: { tenantId: w.tenantId } });
    expect(change).toMatchObject({ kind: "policy", status: "pending", mode: "second-admin" });

    signedIn.user = agentSession(w);
    const lapsed = await connect(["orders:read"]);
    await idleFor(w, 45);
    expect((await refreshWith(lapsed.refresh_token)).status).toBe(400);
    const idle = await connect(["orders:read"]);
    await idleFor(w, 45);
    const second = { id: other, tenantId: w.tenantId };
    const approval = await provedFor(other, {
      kind: "admin.change-approved",
      changeId: change.id,
      digest: change.digest,
    });
    expect(await approveChange(second, change.id, change.digest, approval)).toMatchObject({ ok: true });
    expect(await tenantPolicy(w.tenantId)).toMatchObject({ oauthRefreshIdleDays: 60, oauthRefreshMaxDays: 90 });
    expect((await refreshWith(idle.refresh_token)).status).toBe(200);
  });

  it("an absolute lifetime shorter than the idle one is refused in words and changes nothing", async () => {
    const w = await signedInWorld();
    await signInAs(w, w.users.admin);
    const answer = await updatePolicyAction({ policy: await form(w, { oauthRefreshMaxDays: "20" }) });
    expect(answer).toEqual({
      ok: false,
      code: "input.invalid",
      message:
        "Connection absolute lifetime (days) must be at least Connection idle lifetime (days): raise the first or lower the second.",
    });
    expect(await tenantPolicy(w.tenantId)).toMatchObject({ oauthRefreshIdleDays: 30, oauthRefreshMaxDays: 90 });
    expect(await db.auditLog.count({ where: { tenantId: w.tenantId, action: "policy.updated" } })).toBe(0);
    expect(await updatePolicyAction({ policy: await form(w, { oauthRefreshMaxDays: "731" }) })).toMatchObject({
      ok: false,
      message: "Connection absolute lifetime (days) must be from 1 to 730.",
    });
  });
});

describe("rate limits per agent", () => {
  it("an agent's key and two connections share one per-minute budget: consenting again adds none", async () => {
    const second = new Date().getUTCSeconds();
    if (second >= 50) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
    const w = await createWorld({ rateKeyPerMin: 3 });
    signedIn.user = agentSession(w);
    const conversation = await agentConversation(w);
    const one = await connect(["orders:read"]);
    const two = await connect(["orders:read"]);
    const read = { name: "get_order", arguments: { order_id: w.orders.o1001 } };
    const viaMcp = async (accessToken: string) => {
      const answer = await mcpRequest(conversation, accessToken, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: read,
      });
      return ((await answer.json()) as { result: { structuredContent: { status: string } } }).result.structuredContent
        .status;
    };
    expect((await propose(w.keys.agent, conversation, read)).status).toBe(200);
    expect(await viaMcp(one.access_token)).toBe("ok");
    expect(await viaMcp(two.access_token)).toBe("ok");
    expect(await viaMcp(two.access_token)).toBe("unavailable");
    expect((await propose(w.keys.agent, conversation, read)).status).toBe(429);
    expect(await db.rateBucket.findUniqueOrThrow({ where: { key: `a:${w.users.agent}` } })).toMatchObject({ count: 5 });
  });
});

describe("a connection revoked while a request of it waits", () => {
  it("gets the MCP route's 401 from its open tasks/result, and no outcome, though the supervisor's approval stands", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w, "ana");
    signedIn.user = agentSession(w);
    const tokens = await connect(["orders:read", "refunds:write"]);
    const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: w.tenantId, agentId: w.users.agent } });
    const rpc = (id: number, method: string, params: Record<string, unknown>) => ({
      jsonrpc: "2.0",
      id,
      method,
      params,
    });
    const created = await mcpRequest(
      conversation,
      tokens.access_token,
      rpc(1, "tools/call", {
        name: "issue_refund",
        arguments: refundArguments(w.orders.o1004, 8000),
        task: { ttl: 600_000 },
      }),
    );
    const { taskId } = ((await created.json()) as { result: { task: { taskId: string } } }).result.task;
    const request = await db.approvalRequest.findFirstOrThrow({ where: { tenantId: w.tenantId, status: "pending" } });

    // tasks/result waits for the decision; meanwhile the person revokes the connection, then a supervisor approves.
    const waiting = mcpRequest(conversation, tokens.access_token, rpc(2, "tasks/result", { taskId }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await revokeOwnConnection({ id: w.users.agent, tenantId: w.tenantId }, grant.id)).toBe(true);
    expect(await approveRequest(supervisorOf(w), request.id)).toMatchObject({ ok: true, status: "approved" });

    const answer = await waiting;
    const text = await answer.text();
    // Word for word what the route answers a request of the revoked connection, so the client authorizes again.
    const unauthenticated = await mcpRequest(conversation, tokens.access_token, rpc(3, "tasks/result", { taskId }));
    expect([answer.status, text, answer.headers.get("www-authenticate")]).toEqual([
      401,
      await unauthenticated.text(),
      unauthenticated.headers.get("www-authenticate"),
    ]);
    expect(JSON.parse(text)).toMatchObject({ error: { code: "auth.invalid-token" } });
    expect(text).not.toContain("refund_id");
    // The decision was the supervisor's, made on a call proposed while the connection was live: it executed.
    expect(await db.refund.count({ where: { orderId: w.orders.o1004 } })).toBe(1);
    expect(
      (await db.mcpTask.findUniqueOrThrow({ where: { id: taskId }, include: { toolCall: true } })).toolCall.kind,
    ).toBe("executed");
  });

  it("gets the MCP route's 401 from its get_call_status wait, and nothing of the call", async () => {
    const w = await createWorld();
    const conversation = await agentConversation(w, "ana");
    signedIn.user = agentSession(w);
    const tokens = await connect(["orders:read", "refunds:write"]);
    const grant = await db.oAuthGrant.findFirstOrThrow({ where: { tenantId: w.tenantId, agentId: w.users.agent } });
    const callTool = (id: number, name: string, args: Record<string, unknown>) =>
      mcpRequest(conversation, tokens.access_token, {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name, arguments: args },
      });
    const held = await callTool(1, "issue_refund", refundArguments(w.orders.o1004, 8000));
    const { call_id: callId } = ((await held.json()) as { result: { structuredContent: { call_id: string } } }).result
      .structuredContent;
    const request = await db.approvalRequest.findFirstOrThrow({ where: { tenantId: w.tenantId, status: "pending" } });

    const read = { call_id: callId, wait_seconds: 20 };
    const waiting = callTool(2, "get_call_status", read);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await revokeOwnConnection({ id: w.users.agent, tenantId: w.tenantId }, grant.id)).toBe(true);
    expect(await approveRequest(supervisorOf(w), request.id)).toMatchObject({ ok: true, status: "approved" });

    const answer = await waiting;
    const text = await answer.text();
    // Word for word what the route answers a request of the revoked connection.
    const unauthenticated = await callTool(3, "get_call_status", read);
    expect([answer.status, text, answer.headers.get("www-authenticate")]).toEqual([
      401,
      await unauthenticated.text(),
      unauthenticated.headers.get("www-authenticate"),
    ]);
    expect(JSON.parse(text)).toMatchObject({ error: { code: "auth.invalid-token" } });
    expect(text).not.toContain(callId);
    expect(await db.refund.count({ where: { orderId: w.orders.o1004 } })).toBe(1);
  });
});
