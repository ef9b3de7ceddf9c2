import { beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "@/lib/auth/password-hash";
import { db } from "@/lib/db";
import { POLICY_FIELDS, displayValue } from "@/lib/admin/policy/fields";
import { callAction, sessionCookie } from "../support/app-instances";
import { addPerson, createWorld, type World } from "../support/world";
import { ownInstances } from "../support/own-instances";

// Issue 23, route 4, over HTTP against the production build: a lone admin with their own cookie and password tries
// to switch human approval off (docs/decisions/015). Every step is a server action posted as the browser posts it.

const PASSWORD = "admin-password-for-this-test";
const [app] = ownInstances(1);
let world: World;

beforeAll(async () => {
  world = await createWorld();
});

async function cookieFor(id: string): Promise<string> {
  const user = await db.user.update({
    where: { id },
    data: { passwordHash: await hashPassword(PASSWORD) },
    select: { id: true, role: true, tenantId: true, email: true },
  });
  return sessionCookie(user);
}

/** The step-up an attacker who knows the password can make, through the ceremony's own action. */
async function stepUp(cookie: string, purpose: Record<string, unknown>): Promise<string> {
  const answer = await callAction(
    app.url,
    "/admin/policy",
    "passwordStepUpAction",
    [{ purpose, password: PASSWORD }],
    cookie,
  );
  const proofId = /"proofId":"([^"]+)"/.exec(answer)?.[1];
  if (!proofId) throw new Error(`no proof: ${answer}`);
  return proofId;
}

describe("route 4: one admin alone cannot switch human approval off (HTTP)", () => {
  it("a lone admin's raise to 10,000,000 cents waits; approving it themselves is refused; a second admin's approval applies it once; a supervisor cancels another", async () => {
    const admin = await cookieFor(world.users.admin);
    const policy = await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } });
    const typed = Object.fromEntries(
      POLICY_FIELDS.map((spec) => [spec.name, displayValue(spec, policy[spec.name])]),
    ) as Record<string, string>;
    const raised = { ...typed, autoLimitCents: "100000.00" };

    // Without a proof nothing happens; with one, the change is held, not applied.
    expect(await callAction(app.url, "/admin/policy", "updatePolicyAction", [{ policy: raised }], admin)).toContain(
      "step-up.required",
    );
    const proofId = await stepUp(admin, { kind: "admin.policy", values: raised });
    const saved = await callAction(
      app.url,
      "/admin/policy",
      "updatePolicyAction",
      [{ policy: raised, proofId }],
      admin,
    );
    expect(saved).toContain("unless a supervisor or admin cancels it");
    expect((await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).autoLimitCents).toBe(5000);
    const change = await db.adminChange.findFirstOrThrow({ where: { tenantId: world.tenantId } });
    expect(change).toMatchObject({ status: "pending", mode: "delay", proposedById: world.users.admin });

    // The proposer approving their own change, with a valid step-up for it.
    const own = await stepUp(admin, { kind: "admin.change-approved", changeId: change.id, digest: change.digest });
    expect(
      await callAction(
        app.url,
        "/admin/policy",
        "approveAdminChangeAction",
        [{ changeId: change.id, digest: change.digest, proofId: own }],
        admin,
      ),
    ).toContain("change.own");
    expect((await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).autoLimitCents).toBe(5000);

    // A second admin approves exactly this change, once.
    const beaId = await addPerson(world, `${world.users.admin}_http`, "ADMIN", "Bea");
    const bea = await cookieFor(beaId);
    const approval = { kind: "admin.change-approved", changeId: change.id, digest: change.digest };
    const beaProof = await stepUp(bea, approval);
    const approve = () =>
      callAction(
        app.url,
        "/admin/policy",
        "approveAdminChangeAction",
        [{ changeId: change.id, digest: change.digest, proofId: beaProof }],
        bea,
      );
    expect(await approve()).toContain('"ok":true');
    expect(await approve()).toContain("change.decided");
    expect((await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).autoLimitCents).toBe(10_000_000);
    expect(await db.adminChange.findUniqueOrThrow({ where: { id: change.id } })).toMatchObject({
      status: "applied",
      decidedById: beaId,
    });

    // Another loosening change; a supervisor (who cannot approve) cancels it, and it never applies.
    const current = await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } });
    const ttl = {
      ...Object.fromEntries(POLICY_FIELDS.map((spec) => [spec.name, displayValue(spec, current[spec.name])])),
      approvalTtlSeconds: "3600",
    };
    const ttlProof = await stepUp(admin, { kind: "admin.policy", values: ttl });
    await callAction(app.url, "/admin/policy", "updatePolicyAction", [{ policy: ttl, proofId: ttlProof }], admin);
    const second = await db.adminChange.findFirstOrThrow({ where: { tenantId: world.tenantId, status: "pending" } });
    const supervisor = await cookieFor(world.users.supervisor);
    expect(
      await callAction(
        app.url,
        "/approvals",
        "approveAdminChangeAction",
        [{ changeId: second.id, digest: second.digest }],
        supervisor,
      ),
    ).toContain("auth.forbidden");
    expect(
      await callAction(app.url, "/approvals", "cancelAdminChangeAction", [{ changeId: second.id }], supervisor),
    ).toContain('"ok":true');
    expect(await db.adminChange.findUniqueOrThrow({ where: { id: second.id } })).toMatchObject({
      status: "cancelled",
      decidedById: world.users.supervisor,
    });
    expect((await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).approvalTtlSeconds).toBe(900);
    expect(
      (await db.auditLog.findMany({ where: { tenantId: world.tenantId }, orderBy: { id: "asc" } })).map(
        (row) => row.action,
      ),
    ).toEqual(["change.proposed", "policy.updated", "change.approved", "change.proposed", "change.cancelled"]);
  });
});
