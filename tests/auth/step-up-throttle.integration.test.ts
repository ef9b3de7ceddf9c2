import bcrypt from "bcryptjs";
import { NextRequest } from "next/server";
import { describe, expect, it, vi } from "vitest";
import { POST as authRoute } from "@/app/api/auth/[...nextauth]/route";
import { beginAttempt, signInKeys } from "@/lib/auth/throttle";
import { db } from "@/lib/db";
import { INSTANCE_SECRET, personCookie } from "../support/app-instances";
import { holdRefund } from "../support/calls";
import { createWorld, type World } from "../support/world";
import { jar } from "../support/cookie-jar";

// Two password budgets that never meet: a stranger failing sign-ins to a supervisor's email locks the sign-in, not
// the signed-in supervisor's step-up (so it cannot stop their large approvals); wrong step-up passwords are counted
// per session and per person. Step-ups and approvals go through the server actions the browser calls; refused
// sign-ins through the sign-in route (next-auth itself needs a Next.js request scope, so a wrong password that
// reaches it is counted by the route's own `beginAttempt`, which nothing takes back; tests/hardening/sign-in.test.ts
// signs in over HTTP against the production build).

vi.mock("next/headers", async () => (await import("../support/cookie-jar")).nextHeadersMock());
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
process.env.NEXTAUTH_SECRET = INSTANCE_SECRET;
const { passkeyStepUpAction, passwordStepUpAction } = await import("@/lib/auth/step-up/actions");
const { decideApprovalsAction } = await import("@/lib/approvals/decision/actions");
const { removePasskeyAction } = await import("@/lib/auth/step-up/passkeys/actions");

const PASSWORD = "the-supervisors-password";

/** A wrong password at the sign-in form, as the route counts it before next-auth checks it. */
async function wrongSignIn(email: string, address: string): Promise<boolean> {
  return (await beginAttempt(signInKeys({ email, address }))).allowed;
}

/** One sign-in attempt through the sign-in route, from a stranger's address. */
async function signIn(email: string, password: string, address: string): Promise<number> {
  const response = await authRoute(
    new NextRequest("http://127.0.0.1:3000/api/auth/callback/credentials", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": address },
      body: new URLSearchParams({ email, password }).toString(),
    }),
    { params: Promise.resolve({ nextauth: ["callback", "credentials"] }) },
  );
  return response.status;
}

/** The supervisor with a known password, signed in (the browser's cookie in the jar); their email and session. */
async function signedInSupervisor(world: World) {
  const person = await db.user.update({
    where: { id: world.users.supervisor },
    data: { passwordHash: bcrypt.hashSync(PASSWORD, 4) },
    select: { id: true, email: true },
  });
  jar.cookie = await personCookie(person.id, "SUPERVISOR");
  const session = await db.session.findFirstOrThrow({
    where: { userId: person.id, endedAt: null },
    orderBy: { createdAt: "desc" },
  });
  return { email: person.email, sessionId: session.id };
}

const approve = (approvalId: string, cents: number) => ({
  kind: "approve" as const,
  items: [{ id: approvalId, cents }],
});

describe("failed sign-ins from outside and the signed-in person's step-up", () => {
  it("a stranger failing sign-ins to a supervisor's email locks the sign-in, even to the right password, but not the supervisor's step-up: the large approval goes through", async () => {
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { stepUpAboveCents: 5000 } });
    const { approvalId } = await holdRefund(world, { amount: 8000 });
    const { email } = await signedInSupervisor(world);
    const stranger = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;

    const counted = [];
    for (let attempt = 0; attempt < 4; attempt++) counted.push(await wrongSignIn(email, stranger));
    expect(counted).toEqual([true, true, true, true]);
    const refused = [];
    for (let attempt = 0; attempt < 6; attempt++) refused.push(await signIn(email, `guess-${attempt}`, stranger));
    expect(refused).toEqual([429, 429, 429, 429, 429, 429]);

    const proved = await passwordStepUpAction({ purpose: approve(approvalId, 8000), password: PASSWORD });
    if (!proved.ok) throw new Error(`step-up refused: ${proved.code} ${proved.message}`);
    const decided = await decideApprovalsAction({
      decision: "approve",
      ids: [approvalId],
      proofId: proved.data.proofId,
    });
    expect(decided).toMatchObject({ ok: true, data: [{ ok: true, status: "approved" }] });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "approved",
      stepUpMethod: "password",
    });

    // The sign-in lockout holds: the right password from outside is still refused while the account is locked.
    expect(await signIn(email, PASSWORD, stranger)).toBe(429);
    expect(await signIn(email, PASSWORD, `203.0.113.${Math.floor(Math.random() * 250) + 1}`)).toBe(429);
  });

  it("wrong step-up passwords are throttled in the session and for the person, never on the sign-in's account key", async () => {
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { stepUpAboveCents: 5000 } });
    const { approvalId } = await holdRefund(world, { amount: 8000 });
    const { email, sessionId } = await signedInSupervisor(world);
    const purpose = approve(approvalId, 8000);

    const answers = [];
    for (let guess = 0; guess < 4; guess++)
      answers.push(await passwordStepUpAction({ purpose, password: `guess-${guess}` }));
    expect(answers.map((answer) => (answer.ok ? "ok" : answer.code))).toEqual([
      "step-up.refused",
      "step-up.refused",
      "step-up.refused",
      "step-up.refused",
    ]);
    // Locked now: even the right password waits, and no proof is made.
    expect(await passwordStepUpAction({ purpose, password: PASSWORD })).toMatchObject({
      ok: false,
      code: "step-up.throttled",
      message: expect.stringMatching(/Try again in \d+ seconds/),
    });
    expect(await db.stepUpProof.count({ where: { userId: world.users.supervisor } })).toBe(0);
    expect(await db.signInThrottle.findUnique({ where: { key: `session:${sessionId}` } })).toMatchObject({
      failures: 4,
    });
    expect(await db.signInThrottle.findUnique({ where: { key: `account:${email}` } })).toBeNull();
    // The lock is in the tenant's audit log, as a sign-in's is: the session, what it was for, how long.
    const locks = await db.auditLog.findMany({ where: { tenantId: world.tenantId, action: "step-up.throttled" } });
    expect(locks.map((row) => [row.actorId, row.detail])).toEqual([
      [
        world.users.supervisor,
        { scope: "session", session_id: sessionId, purpose: "approve", failures: 4, locked_seconds: 2 },
      ],
    ]);

    // Guessing from many sessions of the person still meets the person's budget.
    await db.signInThrottle.update({ where: { key: `person:${world.users.supervisor}` }, data: { failures: 10 } });
    await signedInSupervisor(world);
    expect(await passwordStepUpAction({ purpose, password: "guess-again" })).toMatchObject({ code: "step-up.refused" });
    expect(await passwordStepUpAction({ purpose, password: PASSWORD })).toMatchObject({ code: "step-up.throttled" });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "pending",
    });
  });
});

describe("a proof id that is no id", () => {
  it("is the action's input.invalid, before any statement: nothing decided, no proof used, no error for operators", async () => {
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { stepUpAboveCents: 5000 } });
    const { approvalId, callId } = await holdRefund(world, { amount: 8000 });
    await signedInSupervisor(world);
    const proved = await passwordStepUpAction({ purpose: approve(approvalId, 8000), password: PASSWORD });
    if (!proved.ok) throw new Error(`step-up refused: ${proved.code} ${proved.message}`);

    for (const proofId of [`${proved.data.proofId}\u0000`, "sup_\ud800", "sup one"]) {
      expect(await decideApprovalsAction({ decision: "approve", ids: [approvalId], proofId })).toMatchObject({
        ok: false,
        code: "input.invalid",
      });
      expect(
        await passkeyStepUpAction({ proofId, response: { id: "pk", rawId: "pk", type: "public-key", response: {} } }),
      ).toMatchObject({ ok: false, code: "input.invalid" });
    }
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "pending",
    });
    expect(await db.refund.count({ where: { toolCallId: callId } })).toBe(0);
    expect((await db.stepUpProof.findUniqueOrThrow({ where: { id: proved.data.proofId } })).usedFor).toEqual([]);
    expect(
      await decideApprovalsAction({ decision: "approve", ids: [approvalId], proofId: proved.data.proofId }),
    ).toMatchObject({ ok: true, data: [{ ok: true, status: "approved" }] });
  });
});

describe("ids in a step-up's purpose, or beside it, that are no ids", () => {
  it("are the action's input.invalid: no proof made, no passkey removed, no error for operators", async () => {
    const world = await createWorld();
    await signedInSupervisor(world);
    const passkeyId = `pk_${world.users.supervisor}`;
    const purposes = [
      { kind: "passkey.remove" as const, passkeyId: `${passkeyId}\u0000` },
      { kind: "investigation.release" as const, refundId: "re_\ud800" },
    ];
    for (const purpose of purposes) {
      expect(await passwordStepUpAction({ purpose, password: PASSWORD })).toMatchObject({
        ok: false,
        code: "input.invalid",
      });
    }
    // With no passkey the password proves; with one, the passkey actions are what take its id.
    await db.passkey.create({
      data: { id: passkeyId, userId: world.users.supervisor, publicKey: Buffer.from([1, 2, 3]), name: "Laptop" },
    });
    expect(await removePasskeyAction({ proofId: "sup_none", passkeyId: `${passkeyId}\u0000` })).toMatchObject({
      ok: false,
      code: "input.invalid",
    });
    const assertion = { id: `${passkeyId}\u0000`, rawId: passkeyId, type: "public-key" as const, response: {} };
    expect(await passkeyStepUpAction({ proofId: "sup_none", response: assertion })).toMatchObject({
      ok: false,
      code: "input.invalid",
    });
    expect(await db.stepUpProof.count({ where: { userId: world.users.supervisor } })).toBe(0);
    expect(await db.passkey.count({ where: { userId: world.users.supervisor } })).toBe(1);
  });
});
