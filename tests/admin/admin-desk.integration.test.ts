import { describe, expect, it } from "vitest";
import { recentAudit } from "@/lib/admin/audit";
import { approveChange } from "@/lib/admin/changes/two-admin";
import { parsePolicyForm, tenantPolicy, updatePolicy } from "@/lib/admin/policy/numbers";
import { setRefundPermission } from "@/lib/admin/access/refund-permission";
import { db } from "@/lib/db";
import { displayValue, policyDiff, POLICY_FIELDS } from "@/lib/admin/policy/fields";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { addPerson, createWorld } from "../support/world";
import { policyItem } from "@/lib/auth/step-up/step-up";
import { noProof, policyProof, provedFor } from "../support/step-up";

// The seeded defaults, as the form shows them.
const typed = (overrides: Record<string, string> = {}) => ({
  autoLimitCents: "50.00",
  sessionCapCents: "100.00",
  maxAutoWrites: "3",
  approvalTtlSeconds: "900",
  agentDailyCeilingCents: "250.00",
  tenantDailyCeilingCents: "1000.00",
  rateOpenPerMin: "30",
  stepUpAboveCents: "100.00",
  twoPersonAboveCents: "1000.00",
  expiryWarningSeconds: "300",
  secondAdminAboveCents: "100.00",
  changeDelaySeconds: "86400",
  duplicateWindowHours: "24",
  oauthRefreshIdleDays: "30",
  oauthRefreshMaxDays: "90",
  ...overrides,
});
const DEFAULT_REST = {
  agentDailyCeilingCents: 25000,
  tenantDailyCeilingCents: 100000,
  rateOpenPerMin: 30,
  stepUpAboveCents: 10000,
  twoPersonAboveCents: 100000,
  expiryWarningSeconds: 300,
  secondAdminAboveCents: 10000,
  changeDelaySeconds: 86400,
  duplicateWindowHours: 24,
  oauthRefreshIdleDays: 30,
  oauthRefreshMaxDays: 90,
};

describe("admin: the policy form in currency units", () => {
  it("reads money in currency units and names a bad field by its label with the allowed range", () => {
    expect(parsePolicyForm(typed({ autoLimitCents: "60.5", sessionCapCents: "1,000" }))).toEqual({
      ok: true,
      policy: {
        autoLimitCents: 6050,
        sessionCapCents: 100000,
        maxAutoWrites: 3,
        approvalTtlSeconds: 900,
        ...DEFAULT_REST,
      },
    });
    expect(parsePolicyForm(typed({ autoLimitCents: "-1" }))).toEqual({
      ok: false,
      message: "Auto limit must be an amount such as 50.00, from 0.00 to 100,000.00.",
    });
    expect(parsePolicyForm(typed({ sessionCapCents: "100000.01" }))).toEqual({
      ok: false,
      message: "Session cap must be from 0.00 to 100,000.00.",
    });
    expect(parsePolicyForm(typed({ approvalTtlSeconds: "5", maxAutoWrites: "2.5" }))).toEqual({
      ok: false,
      message:
        "Max automatic writes must be a whole number, from 0 to 1,000. Approval lifetime (seconds) must be from 30 to 604,800.",
    });
    expect(parsePolicyForm(typed({ autoLimitCents: "50.001" })).ok).toBe(false);
    for (const spec of POLICY_FIELDS)
      expect(JSON.stringify(parsePolicyForm(typed({ [spec.name]: "x" })))).not.toContain(spec.name);
  });

  it("records a change with its actor and a field-level diff, and records nothing for a save that changes nothing", async () => {
    const world = await createWorld();
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    // The form as the page fills it from the tenant's policy, saved unchanged.
    const current = await tenantPolicy(world.tenantId);
    const shown = Object.fromEntries(POLICY_FIELDS.map((spec) => [spec.name, displayValue(spec, current[spec.name])]));
    const same = parsePolicyForm(shown);
    if (!same.ok) throw new Error(same.message);
    expect(await updatePolicy(admin, same.policy, { holder: await noProof(admin.id), item: "" })).toMatchObject({
      changed: false,
    });
    expect(await db.auditLog.count({ where: { tenantId: world.tenantId } })).toBe(0);

    const typedChange = { ...shown, autoLimitCents: "60.00" };
    const changed = parsePolicyForm(typedChange);
    if (!changed.ok) throw new Error(changed.message);
    const proof = await policyProof(admin.id, typedChange);
    expect(await updatePolicy(admin, changed.policy, proof)).toMatchObject({
      changed: true,
      policy: { autoLimitCents: 6000 },
    });
    expect(await updatePolicy(admin, changed.policy, proof)).toMatchObject({ changed: false });
    const audit = await recentAudit(world.tenantId);
    expect(audit).toHaveLength(1);
    const adminEmail = (await db.user.findUniqueOrThrow({ where: { id: world.users.admin } })).email;
    expect(audit[0]).toMatchObject({ action: "policy.updated", actor: `Admin (${adminEmail})` });
    expect(
      policyDiff(audit[0].detail.before as Record<string, number>, audit[0].detail.after as Record<string, number>),
    ).toEqual([{ label: "Auto limit", before: "50.00", after: "60.00" }]);
    expect(await recentAudit(world.otherTenantId)).toEqual([]);
  });
});

describe("admin: a change that loosens control needs the admin's step-up", () => {
  it("raising a limit or threshold without a proof for exactly this form changes nothing; lowering needs none", async () => {
    const world = await createWorld();
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const current = await tenantPolicy(world.tenantId);
    const shown = Object.fromEntries(POLICY_FIELDS.map((spec) => [spec.name, displayValue(spec, current[spec.name])]));
    const parse = (typed: Record<string, string>) => {
      const parsed = parsePolicyForm(typed);
      if (!parsed.ok) throw new Error(parsed.message);
      return parsed.policy;
    };
    for (const field of ["autoLimitCents", "stepUpAboveCents", "twoPersonAboveCents", "approvalTtlSeconds"]) {
      const spec = POLICY_FIELDS.find((entry) => entry.name === field)!;
      const raised = { ...shown, [field]: displayValue(spec, current[spec.name] + (spec.unit === "money" ? 100 : 1)) };
      const otherForm = await policyProof(admin.id, { ...raised, maxAutoWrites: "0" });
      // The action hands over the digest of the form as submitted; a proof made for another form does not cover it.
      for (const holder of [await noProof(admin.id), otherForm.holder]) {
        expect(await updatePolicy(admin, parse(raised), { holder, item: policyItem(raised) })).toMatchObject({
          stepUpRequired: true,
        });
      }
      expect(await tenantPolicy(world.tenantId)).toEqual(current);
    }
    // A shorter duplicate-refund window sees fewer repeats: cutting it loosens control too.
    const shorter = { ...shown, duplicateWindowHours: String(current.duplicateWindowHours - 1) };
    expect(
      await updatePolicy(admin, parse(shorter), { holder: await noProof(admin.id), item: policyItem(shorter) }),
    ).toMatchObject({ stepUpRequired: true, loosens: ["Duplicate refund window (hours)"] });
    expect(await db.auditLog.count({ where: { tenantId: world.tenantId } })).toBe(0);

    const lowered = { ...shown, autoLimitCents: "1.00" };
    expect(await updatePolicy(admin, parse(lowered), { holder: await noProof(admin.id), item: "" })).toMatchObject({
      changed: true,
    });
    const raised = { ...shown, autoLimitCents: "80.00" };
    expect(await updatePolicy(admin, parse(raised), await policyProof(admin.id, raised))).toMatchObject({
      changed: true,
      policy: { autoLimitCents: 8000 },
    });
    // Above the tenant's bound the proof is not enough: the raise waits for a second admin (docs/decisions/015).
    const beyond = { ...shown, autoLimitCents: "100000.00" };
    expect(await updatePolicy(admin, parse(beyond), await policyProof(admin.id, beyond))).toMatchObject({
      changed: false,
      held: { mode: "delay" },
      policy: { autoLimitCents: 8000 },
    });
  });
});

describe("admin: an agent's refund permission", () => {
  it("withdrawn, the agent's next refund in an open conversation is denied; granted again (by two admins), it executes; each change audited once", async () => {
    const world = await createWorld();
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const second = {
      id: await addPerson(world, `${world.users.admin}_2`, "ADMIN", "Admin 2"),
      tenantId: world.tenantId,
    };
    const conversation = await agentConversation(world);

    const none = await noProof(admin.id);
    expect(await setRefundPermission(admin, world.users.agent, false, none)).toBe("changed");
    expect(await setRefundPermission(admin, world.users.agent, false, none)).toBe("unchanged");
    expect((await proposeAsAgent(world, conversation, refund(world.orders.o1004, 1000))).json).toMatchObject({
      kind: "denied",
      code: "agent.not-authorized",
    });
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);

    expect(await setRefundPermission(admin, world.users.agent, true, none)).toBe("step-up-required");
    const grant = await provedFor(admin.id, { kind: "admin.refunds-granted", userId: world.users.agent });
    const held = await setRefundPermission(admin, world.users.agent, true, grant);
    if (typeof held !== "object") throw new Error("a grant waits for a second admin");
    const change = await db.adminChange.findUniqueOrThrow({ where: { id: held.id } });
    const approval = { kind: "admin.change-approved" as const, changeId: change.id, digest: change.digest };
    expect(await approveChange(second, change.id, change.digest, await provedFor(second.id, approval))).toEqual({
      ok: true,
    });
    expect((await proposeAsAgent(world, conversation, refund(world.orders.o1004, 1000))).json).toMatchObject({
      kind: "executed",
      code: "refund.issued",
    });

    const audit = await recentAudit(world.tenantId);
    expect(audit.map((entry) => [entry.action, entry.detail.before, entry.detail.after])).toEqual([
      ["change.approved", undefined, undefined],
      ["agent.refunds-granted", false, true],
      ["change.proposed", undefined, undefined],
      ["agent.refunds-withdrawn", true, false],
    ]);
    // Only the tenant's agents: not a supervisor, not another tenant's agent.
    expect(await setRefundPermission(admin, world.users.supervisor, true, none)).toBe("not-found");
    expect(await setRefundPermission(admin, world.users.otherAgent, false, none)).toBe("not-found");
    expect((await db.user.findUniqueOrThrow({ where: { id: world.users.otherAgent } })).canRefund).toBe(true);
    expect(await db.auditLog.count({ where: { tenantId: world.tenantId } })).toBe(4);
  });
});
