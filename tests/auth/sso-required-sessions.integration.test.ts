import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { setSso } from "@/lib/admin/access/sso";
import { applyDueChanges } from "@/lib/admin/changes/two-admin";
import { hashPassword } from "@/lib/auth/password-hash";
import { authOptions } from "@/lib/auth/sign-in/auth";
import { liveSessions, sessionUser, startSession } from "@/lib/auth/sessions";
import type { SsoSettingsInput } from "@/lib/auth/sso/settings";
import { db } from "@/lib/db";
import { encryptSecret } from "@/lib/security/secrets";
import { approveAs } from "../support/admin-changes";
import { startProviderForApp, type TestProvider } from "../support/oidc-provider";
import { provedFor } from "../support/step-up";

// Requiring single sign-on ends the tenant's password sessions when it takes effect (docs/SPEC.md, "Single
// sign-on"): saved at once, or when a held change applies, never when it is only proposed. Sessions the provider
// signed in stay, and so does every session of another tenant.

// A session's row is written when `hold` lets it: a test holds one password sign-in between its check and its session.
const sessionWrite = vi.hoisted(() => ({ hold: null as null | { reached: () => void; released: Promise<void> } }));
vi.mock("@/lib/auth/sql", async (importOriginal) => {
  const original = await importOriginal<typeof import("@/lib/auth/sql")>();
  return {
    ...original,
    insertSession: async (...args: Parameters<typeof original.insertSession>) => {
      const hold = sessionWrite.hold;
      sessionWrite.hold = null;
      if (hold) {
        hold.reached();
        await hold.released;
      }
      return original.insertSession(...args);
    },
  };
});

const APP = "http://toolgate.test";
const BROWSER = { address: "203.0.113.7", userAgent: "test" };
let provider: TestProvider;
const suffix = randomBytes(4).toString("hex");
let passwordHash = "";

beforeAll(async () => {
  provider = await startProviderForApp(APP, "sso-required-tests-only-secret");
  passwordHash = await hashPassword("a-long-enough-password-1");
});

afterAll(async () => provider?.close());

/**
 * A tenant whose provider is set but not required, with its admins (two: a held change waits for the second; one: it
 * applies after the delay) and two supervisors, one signed in by password and one through the provider.
 */
async function tenant(name: string, admins: 1 | 2 = 1) {
  const tenantId = `t_ssoreq_${name}_${suffix}`;
  const emailDomain = `${name}-${suffix}.test`;
  await db.tenant.create({ data: { id: tenantId, name: tenantId } });
  const person = (id: string, role: "ADMIN" | "SUPERVISOR") => ({
    id: `usr_ssoreq_${name}_${id}_${suffix}`,
    tenantId,
    email: `${id}@${emailDomain}`,
    name: id,
    role,
    passwordHash,
  });
  const people = [
    ...Array.from({ length: admins }, (_, index) => person(`admin${index}`, "ADMIN")),
    person("bypassword", "SUPERVISOR"),
    person("byprovider", "SUPERVISOR"),
  ];
  await db.user.createMany({ data: people });
  await db.tenantSso.create({
    data: {
      tenantId,
      displayName: "Corp ID",
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: encryptSecret(provider.clientSecret, `TenantSso.clientSecret:${tenantId}`),
      emailDomain,
    },
  });
  const [admin, second] = people.filter((row) => row.role === "ADMIN").map(({ id }) => ({ id, tenantId }));
  const byPassword = people.find((row) => row.name === "bypassword")!;
  const byProvider = people.find((row) => row.name === "byprovider")!;
  return {
    tenantId,
    emailDomain,
    admin,
    second: second ?? null,
    // Started as the sign-ins start them: the credentials provider's (by password) and the provider's callback's.
    sessions: {
      password: await startSession(byPassword, BROWSER),
      provider: await startSession(byProvider, BROWSER, "sso"),
    },
  };
}
type Tenant = Awaited<ReturnType<typeof tenant>>;

const settings = (t: Tenant, change: Partial<SsoSettingsInput>): SsoSettingsInput => ({
  displayName: "Corp ID",
  issuer: provider.issuer,
  clientId: provider.clientId,
  clientSecret: "",
  emailDomain: t.emailDomain,
  groupsClaim: "",
  roleMap: [],
  required: false,
  ...change,
});

/** The admin's save, with a step-up made for it in a password session of their own (returned). */
async function save(t: Tenant, change: Partial<SsoSettingsInput>) {
  const proof = await provedFor(t.admin.id, { kind: "admin.sso", issuer: provider.issuer, emailDomain: t.emailDomain });
  return { saved: await setSso(t.admin, settings(t, change), proof), adminSession: proof.sessionId };
}

/** Requiring SSO together with a role mapping: a change that waits, for the second admin or the delay. */
const heldRequirement = {
  required: true,
  groupsClaim: "groups",
  roleMap: [{ group: "admins", role: "ADMIN" as const }],
};

const live = async (sessionId: string) => (await sessionUser(sessionId, { touch: false })) !== null;
const setAudits = (tenantId: string) =>
  db.auditLog.findMany({ where: { tenantId, action: "sso.set" }, orderBy: { id: "asc" }, select: { detail: true } });

describe("requiring single sign-on", () => {
  it("ends the tenant's password sessions as it is saved, the admin's own included, and no other session", async () => {
    const t = await tenant("now");
    const elsewhere = await tenant("elsewhere");
    for (const sessionId of [t.sessions.password, t.sessions.provider, elsewhere.sessions.password])
      expect(await live(sessionId)).toBe(true);
    // A password session left idle past its limit: not listed as signed in, ended with the rest but not counted.
    const { userId } = await db.session.findUniqueOrThrow({ where: { id: t.sessions.password } });
    const idle = await startSession({ id: userId, tenantId: t.tenantId }, BROWSER);
    await db.session.update({ where: { id: idle }, data: { lastSeenAt: new Date(Date.now() - 3 * 3600_000) } });
    expect((await liveSessions(t.tenantId)).map((session) => session.id).sort()).toEqual(
      [t.sessions.password, t.sessions.provider].sort(),
    );

    const { saved, adminSession } = await save(t, { required: true });
    expect(saved).toEqual({ ok: true, held: null, passwordSessionsEnded: 2 });
    expect(await db.session.findUniqueOrThrow({ where: { id: idle } })).toMatchObject({ endedReason: "sso-required" });
    expect((await liveSessions(t.tenantId)).map((session) => session.id)).toEqual([t.sessions.provider]);

    // Refused on their next request, by the check every request makes.
    expect(await live(t.sessions.password)).toBe(false);
    expect(await live(adminSession)).toBe(false);
    expect(await db.session.findUniqueOrThrow({ where: { id: t.sessions.password } })).toMatchObject({
      endedAt: expect.any(Date),
      endedReason: "sso-required",
    });
    expect(await live(t.sessions.provider)).toBe(true);
    expect(await live(elsewhere.sessions.password)).toBe(true);
    expect(await live(elsewhere.sessions.provider)).toBe(true);
    expect(await setAudits(t.tenantId)).toEqual([
      { detail: expect.objectContaining({ required: true, passwordSessionsEnded: 2 }) },
    ]);
  });

  it("ends a password session whose sign-in was checked before it took effect and written after", async () => {
    const t = await tenant("race");
    let reached!: () => void;
    let release!: () => void;
    const atWrite = new Promise<void>((resolve) => (reached = resolve));
    sessionWrite.hold = { reached, released: new Promise<void>((resolve) => (release = resolve)) };
    const provider = authOptions.providers[0] as unknown as {
      options: { authorize: (credentials: unknown, request: unknown) => Promise<{ sessionId: string } | null> };
    };
    const signIn = provider.options
      .authorize(
        { email: `bypassword@${t.emailDomain}`, password: "a-long-enough-password-1" },
        { headers: { "user-agent": "test" } },
      )
      .catch((error: Error) => error.message);
    // The sign-in has read that single sign-on is not required and is about to write its session.
    await atWrite;
    const saving = save(t, { required: true });
    await new Promise((resolve) => setTimeout(resolve, 500));
    release();
    const [signedIn, { saved }] = await Promise.all([signIn, saving]);
    expect(saved).toMatchObject({ ok: true, held: null });
    // Signed in before it took effect: the session is one of those it ended.
    expect(signedIn).toMatchObject({ sessionId: expect.any(String) });
    expect(await live((signedIn as { sessionId: string }).sessionId)).toBe(false);
  });

  it("ends nothing while it stays required (an admin's break-glass session survives a later save) nor when turned off", async () => {
    const t = await tenant("stays");
    await save(t, { required: true });
    const breakGlass = await startSession({ id: t.admin.id, tenantId: t.tenantId }, BROWSER);

    const renamed = await save(t, { required: true, displayName: "Corp ID (new)" });
    expect(renamed.saved).toEqual({ ok: true, held: null, passwordSessionsEnded: 0 });
    expect(await live(breakGlass)).toBe(true);
    expect(await live(renamed.adminSession)).toBe(true);

    const off = await save(t, { required: false });
    expect(off.saved).toEqual({ ok: true, held: null, passwordSessionsEnded: 0 });
    for (const sessionId of [breakGlass, renamed.adminSession, off.adminSession, t.sessions.provider])
      expect(await live(sessionId)).toBe(true);
    const audits = await setAudits(t.tenantId);
    expect(audits).toHaveLength(3);
    expect(audits[1].detail).not.toHaveProperty("passwordSessionsEnded");
    expect(audits[2].detail).not.toHaveProperty("passwordSessionsEnded");
  });

  it("held for a second admin, ends the password sessions when they approve it, not when it is proposed", async () => {
    const t = await tenant("approved", 2);
    const { saved, adminSession } = await save(t, heldRequirement);
    expect(saved).toMatchObject({ ok: true, held: { mode: "second-admin" }, passwordSessionsEnded: 0 });
    expect(await live(t.sessions.password)).toBe(true);
    expect(await live(adminSession)).toBe(true);

    const change = await db.adminChange.findUniqueOrThrow({
      where: { id: (saved as { held: { id: string } }).held.id },
    });
    expect(await approveAs(t.second!, change)).toEqual({ ok: true });
    expect(await live(t.sessions.password)).toBe(false);
    expect(await live(adminSession)).toBe(false);
    expect(await live(t.sessions.provider)).toBe(true);
    // The proposer's and the approver's password sessions (the approver's step-up made one) and the supervisor's.
    expect(await setAudits(t.tenantId)).toEqual([
      {
        detail: expect.objectContaining({ required: true, changeId: change.id, passwordSessionsEnded: 3 }),
      },
    ]);
  });

  it("held for the delay, ends the password sessions when the job applies it", async () => {
    const t = await tenant("delayed");
    const { saved, adminSession } = await save(t, heldRequirement);
    expect(saved).toMatchObject({ ok: true, held: { mode: "delay" } });
    const id = (saved as { held: { id: string } }).held.id;
    await applyDueChanges();
    expect(await live(t.sessions.password)).toBe(true);

    await db.adminChange.update({ where: { id }, data: { applyAt: new Date(Date.now() - 1000) } });
    // Another test file's run of the job, on the same database, may apply it first: either way it has applied now.
    await applyDueChanges();
    expect(await db.adminChange.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "applied" });
    expect(await live(t.sessions.password)).toBe(false);
    expect(await live(adminSession)).toBe(false);
    expect(await live(t.sessions.provider)).toBe(true);
    expect(await setAudits(t.tenantId)).toEqual([
      { detail: expect.objectContaining({ changeId: id, approvedById: null, passwordSessionsEnded: 2 }) },
    ]);
  });
});
