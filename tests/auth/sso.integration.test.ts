import { randomBytes } from "node:crypto";
import { decode } from "next-auth/jwt";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GET as ssoCallbackRoute } from "@/app/api/sso/callback/route";
import { GET as ssoStartRoute } from "@/app/api/sso/start/route";
import { authOptions } from "@/lib/auth/sign-in/auth";
import { sessionUser } from "@/lib/auth/sessions";
import { attemptCookieName, openAttempt, sealAttempt } from "@/lib/auth/sso/sign-in/attempt";
import { approveChange } from "@/lib/admin/changes/two-admin";
import { removeSso, setSso } from "@/lib/admin/access/sso";
import { inviteToSso } from "@/lib/admin/access/sso-invite";
import type { SsoSettingsInput } from "@/lib/auth/sso/settings";
import { findSsoByTenant } from "@/lib/auth/sso/sql";
import { hashPassword } from "@/lib/auth/password-hash";
import { db } from "@/lib/db";
import { encryptSecret } from "@/lib/security/secrets";
import { holdOpen } from "../support/locks";
import { signInAtProvider, startProviderForApp, type TestProvider } from "../support/oidc-provider";
import { proveWithPassword, stepUpWayOf, type StepUpPurpose } from "@/lib/auth/step-up/step-up";
import { noProof, provedFor, sessionOf } from "../support/step-up";

// Single sign-on through a real OpenID provider (oidc-provider) and toolgate's own routes: the start route sends the
// browser to the provider, the test signs in on the provider's pages, and the callback route must bind, refuse or
// start a session exactly as docs/SPEC.md says, with the rows to show for it.

const APP = "http://toolgate.test";
const PASSWORD = "a-long-enough-password-1";
let provider: TestProvider;
const suffix = randomBytes(4).toString("hex");
const tenantId = `t_sso_${suffix}`;
const domain = `sso-${suffix}.test`;
const people = {
  supervisor: { id: `usr_ssosup_${suffix}`, email: `sup@${domain}`, role: "SUPERVISOR" as const },
  other: { id: `usr_ssooth_${suffix}`, email: `other@${domain}`, role: "SUPERVISOR" as const },
  gone: { id: `usr_ssogone_${suffix}`, email: `gone@${domain}`, role: "SUPERVISOR" as const },
  invited: { id: `usr_ssoinv_${suffix}`, email: `invited@${domain}`, role: "SUPERVISOR" as const },
  admin: { id: `usr_ssoadm_${suffix}`, email: `admin@${domain}`, role: "ADMIN" as const },
  admin2: { id: `usr_ssoadm2_${suffix}`, email: `admin2@${domain}`, role: "ADMIN" as const },
  passkeyless: { id: `usr_ssopk_${suffix}`, email: `pk@${domain}`, role: "SUPERVISOR" as const },
  mixed: { id: `usr_ssomix_${suffix}`, email: `mixed@${domain}`, role: "SUPERVISOR" as const },
  inactive: { id: `usr_ssoina_${suffix}`, email: `inactive@${domain}`, role: "SUPERVISOR" as const },
  unmapped: { id: `usr_ssounm_${suffix}`, email: `unmapped@${domain}`, role: "SUPERVISOR" as const },
  twice: { id: `usr_ssotwi_${suffix}`, email: `twice@${domain}`, role: "SUPERVISOR" as const },
};

beforeAll(async () => {
  provider = await startProviderForApp(APP, "sso-tests-only-secret");
  await db.tenant.create({ data: { id: tenantId, name: `SSO ${suffix}` } });
  const passwordHash = await hashPassword(PASSWORD);
  await db.user.createMany({
    data: Object.values(people).map((person) => ({ ...person, tenantId, name: person.id, passwordHash })),
  });
  await db.tenantSso.create({
    data: {
      tenantId,
      displayName: "Acme ID",
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: encryptSecret(provider.clientSecret, `TenantSso.clientSecret:${tenantId}`),
      emailDomain: domain,
    },
  });
});

afterAll(async () => provider?.close());

/** The start route for this email: the provider's authorization URL and the browser's attempt cookie. */
async function start(email: string) {
  const response = await ssoStartRoute(
    new NextRequest(`${APP}/api/sso/start?email=${encodeURIComponent(email)}&next=/approvals`),
  );
  expect(response.status).toBe(303);
  const location = response.headers.get("location")!;
  expect(location.startsWith(provider.issuer)).toBe(true);
  const cookie = response.headers.getSetCookie()[0].split(";")[0];
  return { location, cookie };
}

async function callback(url: string, cookie: string | null) {
  return ssoCallbackRoute(new NextRequest(url, { headers: cookie ? { cookie } : {} }));
}

/** A whole sign-in as `sub`: start, the provider's pages, the callback. */
async function signIn(sub: string, email: string) {
  const { location, cookie } = await start(email);
  return callback(await signInAtProvider(location, sub, APP), cookie);
}

/** The session a callback's cookie signs in. */
async function sessionIdOf(response: Response): Promise<string> {
  const cookie = response.headers
    .getSetCookie()
    .find((line) => line.startsWith("next-auth.session-token="))!
    .split(";")[0]
    .split("=")[1];
  const token = await decode({ token: cookie, secret: "sso-tests-only-secret" });
  return token!.sid as string;
}

const refusedWith = (response: Response) => new URL(response.headers.get("location")!).searchParams.get("error");
const liveSessions = (userId: string) => db.session.count({ where: { userId, endedAt: null } });
const identities = (userId: string) => db.ssoIdentity.findMany({ where: { userId } });

describe("single sign-on through a real OpenID provider", () => {
  it("binds the provider's subject to the person by a verified email and starts a normal session", async () => {
    provider.accounts.set(`sub-sup-${suffix}`, { email: people.supervisor.email, emailVerified: true });
    const response = await signIn(`sub-sup-${suffix}`, people.supervisor.email);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`${APP}/approvals`);
    const sid = await sessionIdOf(response);
    expect(await sessionUser(sid)).toMatchObject({ id: people.supervisor.id, role: "SUPERVISOR", tenantId });
    expect(await identities(people.supervisor.id)).toMatchObject([
      { subject: `sub-sup-${suffix}`, issuer: provider.issuer, boundBy: "verified-email" },
    ]);
    expect(await db.auditLog.count({ where: { tenantId, actorId: people.supervisor.id, action: "sso.bound" } })).toBe(
      1,
    );

    // The next sign-in finds the binding, even once the provider's email changes.
    provider.accounts.set(`sub-sup-${suffix}`, { email: "renamed@elsewhere.test", emailVerified: true });
    const again = await signIn(`sub-sup-${suffix}`, people.supervisor.email);
    expect(again.headers.get("location")).toBe(`${APP}/approvals`);
    expect(await liveSessions(people.supervisor.id)).toBe(2);
    expect(await identities(people.supervisor.id)).toHaveLength(1);
  });

  it("two first sign-ins of one subject at the same moment both sign in, bound once", async () => {
    const sub = `sub-twice-${suffix}`;
    provider.accounts.set(sub, { email: people.twice.email, emailVerified: true });
    const attempts = [];
    for (let i = 0; i < 2; i++) {
      const { location, cookie } = await start(people.twice.email);
      attempts.push({ url: await signInAtProvider(location, sub, APP), cookie });
    }
    // Both callbacks find the subject unbound, then queue for the person's row, which another transaction holds.
    const holder = await holdOpen(
      (tx) => tx.$queryRaw`SELECT 1 FROM "User" WHERE "id" = ${people.twice.id} FOR UPDATE`,
    );
    const callbacks = attempts.map((attempt) => callback(attempt.url, attempt.cookie));
    for (let tries = 0; tries < 200; tries++) {
      const [{ waiting }] = await db.$queryRaw<{ waiting: number }[]>`
        SELECT count(*)::int AS "waiting" FROM pg_stat_activity WHERE ${holder.pid}::int = ANY(pg_blocking_pids(pid))`;
      if (waiting === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    holder.release();
    await holder.done;
    const responses = await Promise.all(callbacks);
    expect(responses.map((response) => response.headers.get("location"))).toEqual([
      `${APP}/approvals`,
      `${APP}/approvals`,
    ]);
    expect(await identities(people.twice.id)).toHaveLength(1);
    expect(await db.auditLog.count({ where: { tenantId, actorId: people.twice.id, action: "sso.bound" } })).toBe(1);
    expect(await liveSessions(people.twice.id)).toBe(2);
  });

  it("never binds an unverified email to an existing person", async () => {
    provider.accounts.set(`sub-claims-other-${suffix}`, { email: people.other.email, emailVerified: false });
    const response = await signIn(`sub-claims-other-${suffix}`, people.other.email);
    expect(refusedWith(response)).toBe("sso.unverified-email");
    expect(response.headers.getSetCookie().some((line) => line.startsWith("next-auth.session-token="))).toBe(false);
    expect(await identities(people.other.id)).toEqual([]);
    expect(await liveSessions(people.other.id)).toBe(0);
  });

  it("never lets the ID token's verified address vouch for another address userinfo sends", async () => {
    const refusals = () => db.auditLog.count({ where: { tenantId, action: "sso.refused" } });
    const before = await refusals();
    // The address the provider verified is the account holder's own; the one in the profile they typed is a person's.
    provider.accounts.set(`sub-mix-${suffix}`, {
      email: `own-${suffix}@elsewhere.test`,
      emailVerified: true,
      userinfo: { email: people.mixed.email },
    });
    const response = await signIn(`sub-mix-${suffix}`, people.mixed.email);
    expect(refusedWith(response)).toBe("sso.email-mismatch");
    // Userinfo claiming the person's address verified does not outvote the ID token either.
    provider.accounts.get(`sub-mix-${suffix}`)!.userinfo = { email: people.mixed.email, emailVerified: true };
    expect(refusedWith(await signIn(`sub-mix-${suffix}`, people.mixed.email))).toBe("sso.email-mismatch");
    expect(response.headers.getSetCookie().some((line) => line.startsWith("next-auth.session-token="))).toBe(false);
    expect(await identities(people.mixed.id)).toEqual([]);
    expect(await db.ssoIdentity.count({ where: { tenantId, subject: `sub-mix-${suffix}` } })).toBe(0);
    expect(await liveSessions(people.mixed.id)).toBe(0);
    expect(await refusals()).toBe(before + 2);
    expect(
      await db.auditLog.count({
        where: { tenantId, action: "sso.refused", detail: { path: ["code"], equals: "sso.email-mismatch" } },
      }),
    ).toBe(2);

    // Userinfo that carries the same address (and says it is verified) agrees: the sign-in binds as usual.
    provider.accounts.set(`sub-mix-${suffix}`, {
      email: people.mixed.email,
      emailVerified: true,
      userinfo: { email: people.mixed.email.toUpperCase(), emailVerified: true },
    });
    expect((await signIn(`sub-mix-${suffix}`, people.mixed.email)).headers.get("location")).toBe(`${APP}/approvals`);
    expect(await identities(people.mixed.id)).toMatchObject([{ subject: `sub-mix-${suffix}` }]);
  });

  it("refuses a callback whose state, PKCE verifier or nonce is not the attempt's, or that has no attempt", async () => {
    provider.accounts.set(`sub-other-${suffix}`, { email: people.other.email, emailVerified: true });
    const first = await start(people.other.email);
    const back = new URL(await signInAtProvider(first.location, `sub-other-${suffix}`, APP));

    const noAttempt = await callback(back.href, null);
    expect(refusedWith(noAttempt)).toBe("sso.no-attempt");

    const wrongState = new URL(back);
    wrongState.searchParams.set("state", "not-the-attempts-state");
    expect(refusedWith(await callback(wrongState.href, first.cookie))).toBe("sso.invalid-response");

    // Another attempt of the same browser: its state matches the URL, but the code was issued for the first
    // attempt's PKCE challenge.
    const second = await start(people.other.email);
    const secondState = openAttempt(decodeURIComponent(second.cookie.split("=").slice(1).join("=")))!.state;
    const crossed = new URL(back);
    crossed.searchParams.set("state", secondState);
    expect(refusedWith(await callback(crossed.href, second.cookie))).toBe("sso.provider-refused");

    // The first attempt as the browser holds it, but with another nonce than the ID token carries.
    const third = await start(people.other.email);
    const thirdBack = new URL(await signInAtProvider(third.location, `sub-other-${suffix}`, APP));
    const attempt = openAttempt(decodeURIComponent(third.cookie.split("=").slice(1).join("=")))!;
    const otherNonce = `${attemptCookieName()}=${sealAttempt({ ...attempt, nonce: "another-nonce-entirely" })}`;
    expect(refusedWith(await callback(thirdBack.href, otherNonce))).toBe("sso.invalid-response");

    expect(await identities(people.other.id)).toEqual([]);
    expect(await liveSessions(people.other.id)).toBe(0);
  });

  it("refuses a subject longer than OpenID Connect allows as an invalid response, binding nothing and logging no error", async () => {
    // OpenID Connect Core 2: a `sub` is at most 255 ASCII characters. A hostile provider's longer one is its answer's fault.
    const sub = randomBytes(3000).toString("base64url");
    provider.accounts.set(sub, { email: people.other.email, emailVerified: true });
    const refusals = () =>
      db.auditLog.count({
        where: { tenantId, action: "sso.refused", detail: { path: ["code"], equals: "sso.invalid-response" } },
      });
    const before = await refusals();
    const logged = vi.spyOn(console, "error");
    const response = await signIn(sub, people.other.email);
    const errors = logged.mock.calls.filter(([line]) => String(line).includes('"level":"error"'));
    logged.mockRestore();
    expect(refusedWith(response)).toBe("sso.invalid-response");
    expect(errors).toEqual([]);
    expect(response.headers.getSetCookie().some((line) => line.startsWith("next-auth.session-token="))).toBe(false);
    expect(await refusals()).toBe(before + 1);
    expect(await identities(people.other.id)).toEqual([]);
    expect(await liveSessions(people.other.id)).toBe(0);
  });

  it("refuses a person deactivated in toolgate, and one the provider no longer signs in", async () => {
    provider.accounts.set(`sub-gone-${suffix}`, { email: people.gone.email, emailVerified: true });
    expect((await signIn(`sub-gone-${suffix}`, people.gone.email)).status).toBe(303);
    expect(await liveSessions(people.gone.id)).toBe(1);
    await db.session.updateMany({ where: { userId: people.gone.id }, data: { endedAt: new Date() } });

    provider.accounts.get(`sub-gone-${suffix}`)!.disabled = true;
    expect(refusedWith(await signIn(`sub-gone-${suffix}`, people.gone.email))).toBe("sso.provider-refused");

    provider.accounts.get(`sub-gone-${suffix}`)!.disabled = false;
    await db.user.update({ where: { id: people.gone.id }, data: { active: false } });
    expect(refusedWith(await signIn(`sub-gone-${suffix}`, people.gone.email))).toBe("sso.deactivated");
    expect(await liveSessions(people.gone.id)).toBe(0);
  });

  it("refuses a deactivated person's first sign-in by a verified email before binding anything", async () => {
    await db.user.update({ where: { id: people.inactive.id }, data: { active: false } });
    provider.accounts.set(`sub-inactive-${suffix}`, { email: people.inactive.email, emailVerified: true });
    expect(refusedWith(await signIn(`sub-inactive-${suffix}`, people.inactive.email))).toBe("sso.deactivated");
    expect(await db.ssoIdentity.count({ where: { tenantId, subject: `sub-inactive-${suffix}` } })).toBe(0);
    expect(await identities(people.inactive.id)).toEqual([]);
    expect(await db.auditLog.count({ where: { tenantId, actorId: people.inactive.id, action: "sso.bound" } })).toBe(0);
    expect(await liveSessions(people.inactive.id)).toBe(0);

    // Active again, the same subject binds at its next sign-in: the refusal left nothing in the way.
    await db.user.update({ where: { id: people.inactive.id }, data: { active: true } });
    expect((await signIn(`sub-inactive-${suffix}`, people.inactive.email)).headers.get("location")).toBe(
      `${APP}/approvals`,
    );
    expect(await identities(people.inactive.id)).toHaveLength(1);
  });
});

/**
 * A password sign-in through the credentials provider's `authorize`, as next-auth's callback route calls it (the
 * route's own reading of the form is tests/auth/sign-in-form.integration.test.ts's): the person, or why not.
 */
async function passwordSignIn(email: string) {
  const provider = authOptions.providers[0] as unknown as {
    options: { authorize: (credentials: unknown, request: unknown) => Promise<{ sessionId: string } | null> };
  };
  return provider.options
    .authorize({ email, password: PASSWORD }, { headers: { "user-agent": "test" } })
    .catch((error: Error) => error.message);
}

describe("an admin's single sign-on settings", () => {
  const settings = (issuer: string): SsoSettingsInput => ({
    displayName: "Acme ID",
    issuer,
    clientId: provider.clientId,
    clientSecret: "",
    emailDomain: domain,
    groupsClaim: "",
    roleMap: [],
    required: false,
  });

  it("refuses an issuer at an internal address or one that is not the provider's, and a save without a proof; nothing changes", async () => {
    const before = await findSsoByTenant(db, tenantId);
    const admin = { id: people.admin.id, tenantId };
    for (const issuer of ["http://169.254.169.254/", "http://10.1.2.3/", `${provider.issuer}/not-the-issuer`]) {
      const held = await provedFor(people.admin.id, { kind: "admin.sso", issuer, emailDomain: domain });
      expect(await setSso(admin, settings(issuer), held)).toMatchObject({ code: "sso.issuer-refused" });
    }
    const unproved = await setSso(admin, settings(provider.issuer), {
      userId: people.admin.id,
      sessionId: null,
      proofId: null,
    });
    expect(unproved).toMatchObject({ code: "step-up.required" });
    expect(await findSsoByTenant(db, tenantId)).toEqual(before);
    expect(await db.auditLog.count({ where: { tenantId, action: "sso.set" } })).toBe(0);
  });

  it("a new provider or role mapping waits for a second admin; approved, it applies over the settings it was proposed against, and the groups then decide the role", async () => {
    const admin = { id: people.admin.id, tenantId };
    const before = (await findSsoByTenant(db, tenantId))!;
    const mapped = { ...settings(provider.issuer), roleMap: [{ group: "toolgate-admins", role: "ADMIN" as const }] };
    const proof = await provedFor(admin.id, { kind: "admin.sso", issuer: provider.issuer, emailDomain: domain });
    const saved = await setSso(admin, { ...mapped, groupsClaim: "groups" }, proof);
    expect(saved).toMatchObject({ ok: true, held: { mode: "second-admin" } });
    expect(await findSsoByTenant(db, tenantId)).toEqual(before);
    const held = (saved as { held: { id: string } }).held;
    const change = await db.adminChange.findUniqueOrThrow({ where: { id: held.id } });
    expect(
      JSON.stringify(
        await db.auditLog.findMany({ where: { tenantId, action: "change.proposed" }, select: { detail: true } }),
      ),
    ).not.toContain(before.clientSecret);

    const second = { id: people.admin2.id, tenantId };
    const approval = await provedFor(second.id, {
      kind: "admin.change-approved",
      changeId: held.id,
      digest: change.digest,
    });
    expect(await approveChange(second, held.id, change.digest, approval)).toEqual({ ok: true });
    expect(await findSsoByTenant(db, tenantId)).toMatchObject({
      groupsClaim: "groups",
      roleMap: { "toolgate-admins": "ADMIN" },
      clientSecret: before.clientSecret,
    });

    // The provider's groups now decide the role: none mapped is refused, a mapped one sets it on the person.
    provider.accounts.set(`sub-sup-${suffix}`, { email: people.supervisor.email, emailVerified: true, groups: [] });
    expect(refusedWith(await signIn(`sub-sup-${suffix}`, people.supervisor.email))).toBe("sso.no-role");
    // A first sign-in refused for its groups binds nothing either.
    provider.accounts.set(`sub-unmapped-${suffix}`, { email: people.unmapped.email, emailVerified: true, groups: [] });
    expect(refusedWith(await signIn(`sub-unmapped-${suffix}`, people.unmapped.email))).toBe("sso.no-role");
    expect(await identities(people.unmapped.id)).toEqual([]);
    expect(await db.auditLog.count({ where: { tenantId, actorId: people.unmapped.id } })).toBe(0);
    expect(await liveSessions(people.unmapped.id)).toBe(0);
    provider.accounts.get(`sub-sup-${suffix}`)!.groups = ["everyone", "toolgate-admins"];
    expect((await signIn(`sub-sup-${suffix}`, people.supervisor.email)).headers.get("location")).toBe(
      `${APP}/approvals`,
    );
    expect(await db.user.findUniqueOrThrow({ where: { id: people.supervisor.id } })).toMatchObject({ role: "ADMIN" });
    expect(
      await db.auditLog.count({ where: { tenantId, actorId: people.supervisor.id, action: "sso.role-mapped" } }),
    ).toBe(1);

    // Back to roles as set in toolgate (a narrowing the same rule holds), for the tests after this one.
    const back = await setSso(
      admin,
      settings(provider.issuer),
      await provedFor(admin.id, { kind: "admin.sso", issuer: provider.issuer, emailDomain: domain }),
    );
    const backId = (back as { held: { id: string } }).held.id;
    const backDigest = (await db.adminChange.findUniqueOrThrow({ where: { id: backId } })).digest;
    const proved = await provedFor(second.id, { kind: "admin.change-approved", changeId: backId, digest: backDigest });
    expect(await approveChange(second, backId, backDigest, proved)).toEqual({ ok: true });
  });

  it("an admin's invitation, once a second admin approves it, binds a subject whose provider does not verify its email", async () => {
    provider.accounts.set(`sub-invited-${suffix}`, { email: "whatever@elsewhere.test", emailVerified: false });
    const admin = { id: people.admin.id, tenantId };
    const input = { email: people.invited.email, subject: `sub-invited-${suffix}` };
    const invited = await inviteToSso(admin, input, await provedFor(admin.id, { kind: "admin.sso-invite", ...input }));
    expect(invited).toMatchObject({ ok: true, held: { mode: "second-admin" } });
    const held = (invited as { held: { id: string } }).held;
    expect(refusedWith(await signIn(`sub-invited-${suffix}`, people.invited.email))).toBe("sso.unverified-email");

    const { digest } = await db.adminChange.findUniqueOrThrow({ where: { id: held.id } });
    const second = { id: people.admin2.id, tenantId };
    const proof = await provedFor(second.id, { kind: "admin.change-approved", changeId: held.id, digest });
    expect(await approveChange(second, held.id, digest, proof)).toEqual({ ok: true });
    const response = await signIn(`sub-invited-${suffix}`, people.invited.email);
    expect(response.headers.get("location")).toBe(`${APP}/approvals`);
    expect(await liveSessions(people.invited.id)).toBe(1);
    expect(await identities(people.invited.id)).toMatchObject([{ boundBy: "admin" }]);
  });
});

describe("a tenant that requires single sign-on", () => {
  it("refuses a supervisor's right password, and lets an admin in through the audited break-glass path", async () => {
    const held = await provedFor(people.admin.id, { kind: "admin.sso", issuer: provider.issuer, emailDomain: domain });
    // provedFor gave the admin a password of its own: the break-glass sign-in below uses PASSWORD.
    await db.user.update({ where: { id: people.admin.id }, data: { passwordHash: await hashPassword(PASSWORD) } });
    const saved = await setSso(
      { id: people.admin.id, tenantId },
      {
        displayName: "Acme ID",
        issuer: provider.issuer,
        clientId: provider.clientId,
        clientSecret: "",
        emailDomain: domain,
        groupsClaim: "",
        roleMap: [],
        required: true,
      },
      held,
    );
    expect(saved).toEqual({ ok: true, held: null, passwordSessionsEnded: expect.any(Number) });

    const before = await liveSessions(people.other.id);
    expect(await passwordSignIn(people.other.email)).toBe("sso-required");
    expect(await liveSessions(people.other.id)).toBe(before);

    const admin = await passwordSignIn(people.admin.email);
    expect(await sessionUser((admin as { sessionId: string }).sessionId)).toMatchObject({ id: people.admin.id });
    expect(
      await db.auditLog.count({ where: { tenantId, actorId: people.admin.id, action: "sign-in.break-glass" } }),
    ).toBe(1);
  });

  it("takes no supervisor's password as a step-up, but their first passkey's within 10 minutes of a sign-in through the provider", async () => {
    await db.tenantSso.update({ where: { tenantId }, data: { required: true } });
    const person = { id: people.passkeyless.id, email: people.passkeyless.email };
    provider.accounts.set(`sub-pk-${suffix}`, { email: person.email, emailVerified: true });
    const viaProvider = await sessionIdOf(await signIn(`sub-pk-${suffix}`, person.email));
    const approve: StepUpPurpose = { kind: "approve", items: [{ id: `apr_sso_${suffix}`, cents: 50_000 }] };
    const enrol: StepUpPurpose = { kind: "passkey.enrol" };
    const proofs = () => db.stepUpProof.count({ where: { userId: person.id } });

    // The pages say so before anyone types: a passkey is needed, and the first one can be added now from this session.
    const needed = { with: "passkey-needed", provider: { tenantId, name: "Acme ID" } };
    expect(await stepUpWayOf(person.id, viaProvider)).toEqual({ ...needed, firstPasskey: "now" });
    // The right password, in the session the provider just signed in: an approval still wants a passkey.
    expect(await proveWithPassword(person, viaProvider, approve, PASSWORD)).toEqual({ kind: "sso-required" });
    // A first passkey from a session the password started (as a stolen cookie's might be): sign in through the provider.
    const byPassword = await sessionOf(person.id);
    expect(await proveWithPassword(person, byPassword, enrol, PASSWORD)).toEqual({ kind: "sso-sign-in-again" });
    expect(await stepUpWayOf(person.id, byPassword)).toEqual({ ...needed, firstPasskey: "sign-in-again" });
    expect(await proofs()).toBe(0);

    // From the provider's fresh session, the password proves the enrolment, and only it.
    expect(await proveWithPassword(person, viaProvider, enrol, "not-the-password")).toEqual({ kind: "wrong" });
    expect(await proveWithPassword(person, viaProvider, enrol, PASSWORD)).toMatchObject({ kind: "ok" });
    expect(await proofs()).toBe(1);
    // Older than 10 minutes, the same session must sign in through the provider again.
    await db.session.update({ where: { id: viaProvider }, data: { createdAt: new Date(Date.now() - 11 * 60_000) } });
    expect(await proveWithPassword(person, viaProvider, enrol, PASSWORD)).toEqual({ kind: "sso-sign-in-again" });
    expect(await stepUpWayOf(person.id, viaProvider)).toEqual({ ...needed, firstPasskey: "sign-in-again" });
    expect(await proofs()).toBe(1);

    // An admin keeps the password, as at sign-in (break-glass).
    const admin = { id: people.admin.id, email: people.admin.email };
    await db.user.update({ where: { id: admin.id }, data: { passwordHash: await hashPassword(PASSWORD) } });
    const adminSession = await sessionOf(admin.id);
    expect(await stepUpWayOf(admin.id, adminSession)).toEqual({ with: "password" });
    expect(await proveWithPassword(admin, adminSession, approve, PASSWORD)).toMatchObject({ kind: "ok" });

    // The tenant no longer requiring it, the supervisor's password proves an approval again.
    await db.tenantSso.update({ where: { tenantId }, data: { required: false } });
    expect(await stepUpWayOf(person.id, byPassword)).toEqual({ with: "password" });
    expect(await proveWithPassword(person, byPassword, approve, PASSWORD)).toMatchObject({ kind: "ok" });
  });

  it("removes a provider the tenant requires only with the admin's step-up for it; one it does not require at once", async () => {
    await db.tenantSso.update({ where: { tenantId }, data: { required: true } });
    const admin = { id: people.admin.id, tenantId };
    const removals = () => db.auditLog.count({ where: { tenantId, action: "sso.removed" } });
    const before = await findSsoByTenant(db, tenantId);

    // A stolen admin cookie alone, or a proof for another provider, would turn the supervisors' passwords back on.
    expect(await removeSso(admin, await noProof(admin.id))).toBe("step-up-required");
    const elsewhere = await provedFor(admin.id, { kind: "admin.sso-removed", issuer: "https://id.elsewhere.test" });
    expect(await removeSso(admin, elsewhere)).toBe("step-up-required");
    expect(await findSsoByTenant(db, tenantId)).toEqual(before);
    expect(await removals()).toBe(0);
    expect(await passwordSignIn(people.other.email)).toBe("sso-required");

    const proof = await provedFor(admin.id, { kind: "admin.sso-removed", issuer: provider.issuer });
    expect(await removeSso(admin, proof)).toBe("removed");
    expect(await findSsoByTenant(db, tenantId)).toBeNull();
    expect(
      await db.auditLog.findMany({
        where: { tenantId, action: "sso.removed" },
        select: { actorId: true, detail: true },
      }),
    ).toEqual([{ actorId: admin.id, detail: { stepUp: "password" } }]);
    expect(await passwordSignIn(people.other.email)).toMatchObject({ sessionId: expect.any(String) });

    // Not required, its removal turns no password on: it applies at once, as a tightening does.
    await db.tenantSso.create({ data: { ...before!, required: false, roleMap: {} } });
    expect(await removeSso(admin, await noProof(admin.id))).toBe("removed");
    expect(await findSsoByTenant(db, tenantId)).toBeNull();
    expect(await removals()).toBe(2);
  });
});
