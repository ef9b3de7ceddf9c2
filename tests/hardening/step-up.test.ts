import bcrypt from "bcryptjs";
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { conversationOver, proposeOver } from "../support/api-over-http";
import { callAction, sessionCookie } from "../support/app-instances";
import { createWorld, effectSnapshot, type World } from "../support/world";
import { refund } from "../support/calls";
import { ownInstances } from "../support/own-instances";

// Issue 23, routes 1 and 2 and the admin's loosening changes, performed as an attacker would: over HTTP against
// the production build, with a copied session cookie (a second session of the same person) or the victim's own
// session, calling the server actions the pages call. Each is refused and leaves rows, mail and the provider as
// they were. A step-up proof counts only for its purpose, only in the session that made it, and only once.

const PASSWORD = "the-right-password";

const [app] = ownInstances(1);
let world: World;
let person: { supervisor: PersonRow; admin: PersonRow };

interface PersonRow {
  id: string;
  role: "SUPERVISOR" | "ADMIN";
  tenantId: string;
  email: string;
}

beforeAll(async () => {
  world = await createWorld();
  const hash = bcrypt.hashSync(PASSWORD, 4);
  await db.user.updateMany({
    where: { id: { in: [world.users.supervisor, world.users.admin] } },
    data: { passwordHash: hash },
  });
  await db.tenant.update({ where: { id: world.tenantId }, data: { stepUpAboveCents: 1000, autoLimitCents: 500 } });
  const row = (id: string) =>
    db.user.findUniqueOrThrow({ where: { id }, select: { id: true, role: true, tenantId: true, email: true } });
  person = {
    supervisor: (await row(world.users.supervisor)) as PersonRow,
    admin: (await row(world.users.admin)) as PersonRow,
  };
});

/** The action's answer as the page's script reads it, from the RSC stream. */
async function act(page: string, name: string, input: unknown, cookie: string) {
  const text = await callAction(app.url, page, name, [input], cookie);
  const line = text.split("\n").find((entry) => entry.startsWith("1:"));
  if (!line) throw new Error(`no action result in: ${text.slice(0, 300)}`);
  return JSON.parse(line.slice(2)) as { ok: boolean; code?: string; message?: string; data?: unknown };
}

/** A password step-up made over HTTP from this cookie's session, for this purpose; returns the proof's id. */
async function proveOver(cookie: string, purpose: unknown): Promise<string> {
  const answer = await act("/settings", "passwordStepUpAction", { purpose, password: PASSWORD }, cookie);
  expect(answer).toMatchObject({ ok: true });
  return (answer.data as { proofId: string }).proofId;
}

async function pendingRefund(amount: number, order: string): Promise<string> {
  const customer = order === world.orders.o1002 ? world.customers.ben : world.customers.ana;
  const conversation = await conversationOver(app.url, world.keys.agent, customer);
  const callKey = `step-up-${order}-${amount}-${Date.now()}`;
  const proposed = await proposeOver(app.url, world.keys.agent, conversation, refund(order, amount), callKey);
  expect(proposed.json.code).toBe("approval.required");
  return proposed.json.approval!.id;
}

/** Faults for the next requests to the payment provider every instance of the suite uses. */
const providerFaults = async (faults: unknown[]) =>
  void (await fetch(`${process.env.PAYMENT_PROVIDER_URL}/_faults`, {
    method: "POST",
    body: JSON.stringify({ faults, clear: true }),
  }));

const approve = (ids: string[], cookie: string, proofId?: string) =>
  act("/approvals", "decideApprovalsAction", { decision: "approve", ids, proofId }, cookie);

const passkeyTrail = async () => ({
  passkeys: await db.passkey.count({ where: { userId: world.users.supervisor } }),
  audit: await db.auditLog.count({ where: { tenantId: world.tenantId, action: { startsWith: "passkey." } } }),
  mail: await db.outboxMessage.count({ where: { tenantId: world.tenantId, kind: { startsWith: "passkey." } } }),
});

// A registration an attacker's own authenticator would send: well formed, not one the server asked for.
const attestation = {
  id: "attacker-key",
  rawId: "attacker-key",
  type: "public-key",
  response: { clientDataJSON: "e30", attestationObject: "o2NmbXRkbm9uZQ" },
};

describe("route 1: a stolen supervisor cookie enrols its own passkey", () => {
  it("without a proof, or with the owner's proof from another session, enrolment is refused: nothing stored, audited or mailed", async () => {
    const stolen = await sessionCookie(person.supervisor);
    const owners = await sessionCookie(person.supervisor);
    const before = await passkeyTrail();

    for (const proofId of ["sup_madeUpProofIdOfTwentyTwo", await proveOver(owners, { kind: "passkey.enrol" })]) {
      expect(await act("/settings", "passkeyRegistrationOptionsAction", { proofId }, stolen)).toMatchObject({
        ok: false,
        code: "step-up.required",
      });
      expect(
        await act("/settings", "registerPasskeyAction", { proofId, response: attestation, name: "mine now" }, stolen),
      ).toMatchObject({ ok: false });
    }
    // Without any proof the action does not even take the request.
    expect(await act("/settings", "passkeyRegistrationOptionsAction", {}, stolen)).toMatchObject({
      ok: false,
      code: "input.invalid",
    });
    expect(await passkeyTrail()).toEqual(before);
  });

  it("removing someone's passkeys needs the admin's own proof for that person; the owner's cookie cannot remove them without one", async () => {
    await db.passkey.create({
      data: {
        id: `pk_owner_${world.users.supervisor}`,
        userId: world.users.supervisor,
        publicKey: Buffer.from([1]),
        name: "Owner's laptop",
      },
    });
    const stolen = await sessionCookie(person.supervisor);
    const admin = await sessionCookie(person.admin);
    const before = await passkeyTrail();
    expect(
      await act(
        "/settings",
        "removePasskeyAction",
        { proofId: "sup_madeUpProofIdOfTwentyTwo", passkeyId: `pk_owner_${world.users.supervisor}` },
        stolen,
      ),
    ).toMatchObject({ ok: false, code: "step-up.required" });
    expect(
      await act("/admin/policy", "removePersonPasskeysAction", { userId: world.users.supervisor }, admin),
    ).toMatchObject({ ok: false, code: "step-up.required" });
    expect(await passkeyTrail()).toEqual(before);

    const proofId = await proveOver(admin, { kind: "admin.passkeys-removed", userId: world.users.supervisor });
    expect(
      await act("/admin/policy", "removePersonPasskeysAction", { userId: world.users.supervisor, proofId }, admin),
    ).toMatchObject({ ok: true });
    expect(await passkeyTrail()).toEqual({ passkeys: 0, audit: before.audit + 1, mail: before.mail + 1 });
    const [mail] = await db.outboxMessage.findMany({
      where: { tenantId: world.tenantId, kind: "passkey.removed-by-admin" },
    });
    expect(mail.recipient).toBe(person.supervisor.email);
  });
});

describe("route 2: a step-up proof is bound to its session and to what it approves", () => {
  it("a proof made in session A does not approve from session B (a copied cookie); in A it approves once", async () => {
    const a = await sessionCookie(person.supervisor);
    const b = await sessionCookie(person.supervisor);
    const approvalId = await pendingRefund(3000, world.orders.o1004);
    const proofId = await proveOver(a, { kind: "approve", items: [{ id: approvalId, cents: 3000 }] });
    const before = await effectSnapshot(world);

    const fromB = await approve([approvalId], b, proofId);
    expect(fromB).toMatchObject({ ok: true, data: [{ ok: false, code: "approval.step-up-required" }] });
    expect(await effectSnapshot(world)).toEqual(before);
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");

    expect(await approve([approvalId], a, proofId)).toMatchObject({
      ok: true,
      data: [{ ok: true, status: "approved" }],
    });
    expect(await db.refund.count({ where: { orderId: world.orders.o1004, amountCents: 3000 } })).toBe(1);
  });

  it("a proof for request X at its amount approves neither request Y, nor X at a higher amount, nor a larger batch beyond X", async () => {
    const cookie = await sessionCookie(person.supervisor);
    const x = await pendingRefund(2500, world.orders.o1002);
    const y = await pendingRefund(2000, world.orders.o1004);
    const before = await effectSnapshot(world);

    const forY = await proveOver(cookie, { kind: "approve", items: [{ id: x, cents: 2500 }] });
    expect(await approve([y], cookie, forY)).toMatchObject({
      data: [{ ok: false, code: "approval.step-up-required" }],
    });
    const tooSmall = await proveOver(cookie, { kind: "approve", items: [{ id: x, cents: 1500 }] });
    expect(await approve([x], cookie, tooSmall)).toMatchObject({
      data: [{ ok: false, code: "approval.step-up-required" }],
    });
    expect(await effectSnapshot(world)).toEqual(before);

    // The batch [X, Y] with a proof that signed only X: X goes, Y is refused and stays pending.
    expect(await approve([x, y], cookie, forY)).toMatchObject({
      data: [
        { ok: true, status: "approved" },
        { ok: false, code: "approval.step-up-required" },
      ],
    });
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: y } })).status).toBe("pending");
  });

  it("a proof is used once: the same proof cannot mint a second key", async () => {
    const admin = await sessionCookie(person.admin);
    const proofId = await proveOver(admin, { kind: "admin.key-created", userId: world.users.agent2 });
    const keys = () => db.apiKey.count({ where: { userId: world.users.agent2 } });
    const before = await keys();
    expect(await act("/admin/policy", "createKeyAction", { userId: world.users.agent2, proofId }, admin)).toMatchObject(
      {
        ok: true,
      },
    );
    expect(await act("/admin/policy", "createKeyAction", { userId: world.users.agent2, proofId }, admin)).toMatchObject(
      {
        ok: false,
        code: "step-up.required",
      },
    );
    expect(await keys()).toBe(before + 1);
  });
});

describe("money-moving and loosening actions need their own proof", () => {
  it("releasing an investigated refund without a proof is refused; the order stays blocked", async () => {
    const cookie = await sessionCookie(person.supervisor);
    const approvalId = await pendingRefund(1200, world.orders.o1002);
    const proofId = await proveOver(cookie, { kind: "approve", items: [{ id: approvalId, cents: 1200 }] });
    // Every attempt meets a 503 before the provider acts: nothing is refunded, but only the provider could say so,
    // and the refund waits for a person (as reconciliation leaves it).
    await providerFaults(Array(3).fill({ mode: "unavailable_before" }));
    expect(await approve([approvalId], cookie, proofId)).toMatchObject({ data: [{ ok: true }] });
    await providerFaults([]);
    const refund = await db.refund.findFirstOrThrow({ where: { orderId: world.orders.o1002, amountCents: 1200 } });
    await db.refund.update({ where: { id: refund.id }, data: { status: "investigate" } });
    const release = { refundId: refund.id, resolution: "released", note: "nothing at the provider" };

    const approvalsProof = await proveOver(cookie, { kind: "approve", items: [{ id: approvalId, cents: 1200 }] });
    for (const input of [release, { ...release, proofId: approvalsProof }]) {
      expect(await act("/approvals", "resolveInvestigationAction", input, cookie)).toMatchObject({
        ok: false,
        code: "investigation.step-up-required",
      });
    }
    expect((await db.refund.findUniqueOrThrow({ where: { id: refund.id } })).status).toBe("investigate");

    const releaseProof = await proveOver(cookie, { kind: "investigation.release", refundId: refund.id });
    expect(
      await act("/approvals", "resolveInvestigationAction", { ...release, proofId: releaseProof }, cookie),
    ).toMatchObject({ ok: true });
    expect((await db.refund.findUniqueOrThrow({ where: { id: refund.id } })).status).toBe("released");
    const { totalsByOrder } = (await (await fetch(`${process.env.PAYMENT_PROVIDER_URL}/_stats`)).json()) as {
      totalsByOrder: Record<string, number>;
    };
    const issued = await db.refund.aggregate({
      where: { orderId: world.orders.o1002, status: "issued" },
      _sum: { amountCents: true },
    });
    expect(totalsByOrder[world.orders.o1002] ?? 0).toBe(issued._sum.amountCents ?? 0);
  });

  it("a lone admin without a proof cannot grant refunds, raise limits or mint a key; tightening needs none", async () => {
    const admin = await sessionCookie(person.admin);
    await db.user.update({ where: { id: world.users.agent2 }, data: { canRefund: false } });
    const tenantBefore = await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } });
    const keysBefore = await db.apiKey.count({ where: { tenantId: world.tenantId } });
    const auditBefore = await db.auditLog.count({ where: { tenantId: world.tenantId } });
    const form = (overrides: Record<string, string>) => ({
      autoLimitCents: "5.00",
      sessionCapCents: (tenantBefore.sessionCapCents / 100).toFixed(2),
      maxAutoWrites: String(tenantBefore.maxAutoWrites),
      approvalTtlSeconds: String(tenantBefore.approvalTtlSeconds),
      agentDailyCeilingCents: (tenantBefore.agentDailyCeilingCents / 100).toFixed(2),
      tenantDailyCeilingCents: (tenantBefore.tenantDailyCeilingCents / 100).toFixed(2),
      rateOpenPerMin: String(tenantBefore.rateOpenPerMin),
      stepUpAboveCents: "10.00",
      twoPersonAboveCents: (tenantBefore.twoPersonAboveCents / 100).toFixed(2),
      expiryWarningSeconds: String(tenantBefore.expiryWarningSeconds),
      secondAdminAboveCents: (tenantBefore.secondAdminAboveCents / 100).toFixed(2),
      changeDelaySeconds: String(tenantBefore.changeDelaySeconds),
      duplicateWindowHours: String(tenantBefore.duplicateWindowHours),
      oauthRefreshIdleDays: String(tenantBefore.oauthRefreshIdleDays),
      oauthRefreshMaxDays: String(tenantBefore.oauthRefreshMaxDays),
      ...overrides,
    });

    const loosen = form({ autoLimitCents: "100000.00", stepUpAboveCents: "100000.00" });
    const otherFormsProof = await proveOver(admin, { kind: "admin.policy", values: form({ autoLimitCents: "6.00" }) });
    for (const proofId of [undefined, otherFormsProof]) {
      expect(await act("/admin/policy", "updatePolicyAction", { policy: loosen, proofId }, admin)).toMatchObject({
        ok: false,
        code: "step-up.required",
      });
    }
    expect(
      await act("/admin/policy", "setRefundPermissionAction", { userId: world.users.agent2, canRefund: true }, admin),
    ).toMatchObject({ ok: false, code: "step-up.required" });
    expect(await act("/admin/policy", "createKeyAction", { userId: world.users.agent2 }, admin)).toMatchObject({
      ok: false,
      code: "step-up.required",
    });
    expect(await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).toEqual(tenantBefore);
    expect((await db.user.findUniqueOrThrow({ where: { id: world.users.agent2 } })).canRefund).toBe(false);
    expect(await db.apiKey.count({ where: { tenantId: world.tenantId } })).toBe(keysBefore);
    expect(await db.auditLog.count({ where: { tenantId: world.tenantId } })).toBe(auditBefore);

    // Lowering a limit loosens nothing and needs no proof; with its own proof the raise goes through.
    expect(
      await act("/admin/policy", "updatePolicyAction", { policy: form({ autoLimitCents: "4.00" }) }, admin),
    ).toMatchObject({ ok: true, data: { changed: true } });
    const raise = form({ autoLimitCents: "100000.00", stepUpAboveCents: "100000.00" });
    const proofId = await proveOver(admin, { kind: "admin.policy", values: raise });
    // Above the tenant's bound the proof alone is not enough: the raise waits (the two-admin rule, decision 015).
    expect(await act("/admin/policy", "updatePolicyAction", { policy: raise, proofId }, admin)).toMatchObject({
      ok: true,
      data: { changed: false, held: expect.stringContaining("unless a supervisor or admin cancels it") },
    });
  });
});
