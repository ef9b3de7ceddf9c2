import bcrypt from "bcryptjs";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { conversationOver, csrfOf, proposeOver, signInOver, type SignInAnswer } from "../support/api-over-http";
import { callAction, sessionCookie } from "../support/app-instances";
import { refund } from "../support/calls";
import { createSignInWorld, signInEmail, type World } from "../support/world";
import { ownInstances } from "../support/own-instances";

// Sign-in and sessions through the production build, two instances on one PostgreSQL: throttling that holds
// across instances and cannot be dodged with a forged X-Forwarded-For, hashes upgraded at sign-in, and
// sessions that end everywhere when signed out, ended by an admin, or when the person changes.

const PASSWORD = "correct horse battery staple";
const started = ownInstances(3, (_urls, index): Record<string, string> => (index === 2 ? { TRUST_PROXY: "1" } : {}));
const instances = started.slice(0, 2);
const behindProxy = started[2];
let world: World;

beforeAll(async () => {
  world = await createSignInWorld(PASSWORD, { autoLimitCents: 1000 });
});

// Every request here comes from 127.0.0.1: each test starts with that address's count at zero.
beforeEach(async () => {
  await db.signInThrottle.deleteMany({ where: { key: { startsWith: "address:" } } });
});

async function signOut(base: string, cookie: string): Promise<void> {
  const { csrfToken, cookie: withCsrf } = await csrfOf(base, cookie);
  const response = await fetch(`${base}/api/auth/signout`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: withCsrf },
    body: new URLSearchParams({ csrfToken, json: "true" }),
  });
  expect(response.status).toBeLessThan(400);
}

const opensApprovals = async (base: string, cookie: string) =>
  (await fetch(`${base}/approvals`, { headers: { cookie }, redirect: "manual" })).status === 200;

describe("sign-in throttling", () => {
  it("locks an account after three failures, across instances, answers 429 with Retry-After even to the right password, audits it, and a later success resets", async () => {
    const who = signInEmail(world.users.supervisor);
    const answers: SignInAnswer[] = [];
    for (let attempt = 0; attempt < 4; attempt++)
      answers.push(await signInOver(instances[attempt % 2].url, who, "wrong"));
    expect(answers.map((answer) => [answer.status, answer.cookie])).toEqual(Array(4).fill([401, null]));
    const locked = await signInOver(instances[1].url, who, PASSWORD);
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThan(0);
    expect(locked.cookie).toBeNull();
    expect(JSON.parse(locked.body)).toMatchObject({
      error: { code: "sign-in.throttled" },
      url: expect.stringContaining("error=throttled:"),
    });
    const audit = await db.auditLog.findMany({ where: { tenantId: world.tenantId, action: "sign-in.throttled" } });
    expect(audit.map((row) => (row.detail as { scope: string }).scope)).toEqual(["account"]);

    await new Promise((resolve) => setTimeout(resolve, Number(locked.retryAfter) * 1000 + 200));
    const success = await signInOver(instances[0].url, who, PASSWORD);
    expect([success.status, Boolean(success.cookie)]).toEqual([200, true]);
    expect(await db.signInThrottle.findUnique({ where: { key: `account:${who}` } })).toBeNull();
    expect((await signInOver(instances[1].url, who, "wrong")).status).toBe(401);
  }, 60_000);

  it("answers an unknown account exactly as a known one, so the page cannot tell whether it exists", async () => {
    const known = signInEmail(world.users.admin);
    const unknown = `nobody-${world.tenantId}@acme.test`;
    const statuses = async (address: string) => {
      const seen: number[] = [];
      for (let attempt = 0; attempt < 5; attempt++)
        seen.push((await signInOver(instances[0].url, address, "wrong")).status);
      return seen;
    };
    expect(await statuses(unknown)).toEqual(await statuses(known));
  }, 60_000);

  it("counts per client address: a forged X-Forwarded-For is ignored without TRUST_PROXY, believed behind one proxy", async () => {
    const forged = (index: number) => ({ "x-forwarded-for": `203.0.113.${index}` });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 22; attempt++)
      statuses.push(
        (await signInOver(instances[0].url, `spray-${attempt}-${world.tenantId}@acme.test`, "wrong", forged(attempt)))
          .status,
      );
    expect(statuses.slice(0, 21)).toEqual(Array(21).fill(401));
    expect(statuses[21]).toBe(429);
    expect(
      await db.auditLog.count({
        where: { action: "sign-in.throttled", detail: { path: ["scope"], equals: "address" } },
      }),
    ).toBeGreaterThan(0);

    const behind: number[] = [];
    for (let attempt = 0; attempt < 22; attempt++)
      behind.push(
        (await signInOver(behindProxy.url, `spread-${attempt}-${world.tenantId}@acme.test`, "wrong", forged(attempt)))
          .status,
      );
    expect(behind).toEqual(Array(22).fill(401));
  }, 120_000);
});

describe("password hashes", () => {
  it("a bcrypt hash is verified once and replaced by argon2id at that sign-in", async () => {
    const id = world.users.agent2;
    await db.user.update({
      where: { id },
      data: { passwordHash: await bcrypt.hash(PASSWORD, 10) },
      select: { id: true },
    });
    const first = await signInOver(instances[0].url, signInEmail(id), PASSWORD);
    expect([first.status, Boolean(first.cookie)]).toEqual([200, true]);
    const { passwordHash } = await db.user.findUniqueOrThrow({ where: { id } });
    expect(passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect((await signInOver(instances[1].url, signInEmail(id), PASSWORD)).status).toBe(200);
  });
});

describe("sessions are rows", () => {
  it("a cookie saved before sign-out no longer opens /approvals and cannot approve, on either instance", async () => {
    const conversation = await conversationOver(instances[0].url, world.keys.agent, world.customers.ana);
    const proposed = await proposeOver(
      instances[0].url,
      world.keys.agent,
      conversation,
      refund(world.orders.o1004, 2500),
      "k1",
    );
    const approvalId = proposed.json.approval!.id;

    const { cookie } = await signInOver(instances[0].url, signInEmail(world.users.supervisor), PASSWORD);
    expect(await opensApprovals(instances[1].url, cookie!)).toBe(true);
    await signOut(instances[0].url, cookie!);
    for (const instance of instances) {
      expect(await opensApprovals(instance.url, cookie!)).toBe(false);
      const replay = await callAction(
        instance.url,
        "/approvals",
        "decideApprovalsAction",
        [{ ids: [approvalId], decision: "approve" }],
        cookie!,
      );
      expect(replay).toContain("auth.required");
    }
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
    expect(
      (await db.session.findMany({ where: { userId: world.users.supervisor, endedReason: "signed-out" } })).length,
    ).toBeGreaterThan(0);
  });

  it("deactivating a person, changing their role or their password ends their sessions", async () => {
    const supervisor = {
      id: world.users.supervisor,
      role: "SUPERVISOR" as const,
      tenantId: world.tenantId,
      email: "s@acme.test",
    };
    const changes = [
      { data: { role: "ADMIN" as const }, undo: { role: "SUPERVISOR" as const }, reason: "role-changed" },
      { data: { passwordChangedAt: new Date() }, undo: {}, reason: "password-changed" },
      { data: { active: false }, undo: { active: true }, reason: "deactivated" },
    ];
    for (const change of changes) {
      const cookie = await sessionCookie(supervisor);
      expect(await opensApprovals(instances[0].url, cookie)).toBe(true);
      await db.user.update({ where: { id: supervisor.id }, data: change.data, select: { id: true } });
      await db.user.update({ where: { id: supervisor.id }, data: change.undo, select: { id: true } });
      expect([change.reason, await opensApprovals(instances[1].url, cookie)]).toEqual([change.reason, false]);
      expect(await db.session.count({ where: { userId: supervisor.id, endedReason: change.reason } })).toBeGreaterThan(
        0,
      );
    }
  });

  it("an admin sees a person's sessions and ends them; idle and absolute lifetimes end them too", async () => {
    const supervisor = {
      id: world.users.supervisor,
      role: "SUPERVISOR" as const,
      tenantId: world.tenantId,
      email: "s@acme.test",
    };
    const admin = await sessionCookie({
      id: world.users.admin,
      role: "ADMIN",
      tenantId: world.tenantId,
      email: "a@acme.test",
    });
    const cookie = await sessionCookie(supervisor);
    const page = await (await fetch(`${instances[0].url}/admin/policy`, { headers: { cookie: admin } })).text();
    expect(page).toContain("People and sessions");
    expect(
      await callAction(instances[0].url, "/admin/policy", "endSessionsAction", [{ userId: supervisor.id }], admin),
    ).toContain('"ok":true');
    expect(await opensApprovals(instances[1].url, cookie)).toBe(false);
    expect(await db.auditLog.count({ where: { tenantId: world.tenantId, action: "sessions.ended" } })).toBe(1);
    // Another tenant's admin cannot end them.
    const foreign = await sessionCookie({
      id: world.users.otherSupervisor,
      role: "SUPERVISOR",
      tenantId: world.otherTenantId,
      email: "o@globex.test",
    });
    expect(
      await callAction(instances[0].url, "/admin/policy", "endSessionsAction", [{ userId: supervisor.id }], foreign),
    ).toContain("auth.forbidden");

    const latest = async () =>
      (
        await db.session.findFirstOrThrow({
          where: { userId: supervisor.id, endedAt: null },
          orderBy: { createdAt: "desc" },
          select: { id: true },
        })
      ).id;
    const idle = await sessionCookie(supervisor);
    await db.$executeRaw`UPDATE "Session" SET "lastSeenAt" = now() - interval '31 minutes' WHERE "id" = ${await latest()}`;
    expect(await opensApprovals(instances[0].url, idle)).toBe(false);
    const old = await sessionCookie(supervisor);
    await db.$executeRaw`UPDATE "Session" SET "createdAt" = now() - interval '9 hours' WHERE "id" = ${await latest()}`;
    expect(await opensApprovals(instances[0].url, old)).toBe(false);
  });
});
