import bcrypt from "bcryptjs";
import { describe, expect, it, vi } from "vitest";
import { createAgentKey } from "@/lib/admin/access/agent-keys";
import { approveChange, cancelChange } from "@/lib/admin/changes/two-admin";
import { type PolicyInput, tenantPolicy, updatePolicy } from "@/lib/admin/policy/numbers";
import { setRefundPermission } from "@/lib/admin/access/refund-permission";
import { applyDueChanges } from "@/lib/admin/changes/two-admin";
import { authenticateApiKey } from "@/lib/auth/keys/api-keys";
import { policyItem } from "@/lib/auth/step-up/step-up";
import { db } from "@/lib/db";
import { decryptSecret, webhookUrlContext } from "@/lib/security/secrets";
import { INSTANCE_SECRET, personCookie } from "../support/app-instances";
import { secondAdmin } from "../support/admin-changes";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { noProof, provedFor } from "../support/step-up";
import { createWorld, type World } from "../support/world";
import { jar } from "../support/cookie-jar";

// Issue 23, route 4: one admin alone cannot switch human approval off (docs/decisions/015). Each attack is made
// through the functions the admin page's server actions call (the webhook and self-registration through the server
// actions themselves, with the browser's session cookie), against real PostgreSQL, asserting the rows.

vi.mock("next/headers", async () => (await import("../support/cookie-jar")).nextHeadersMock());
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
process.env.NEXTAUTH_SECRET = INSTANCE_SECRET;
const { setSelfRegistrationAction } = await import("@/lib/admin/access/actions");
const { setWebhookAction } = await import("@/lib/admin/policy/actions");
const { approveAdminChangeAction, cancelAdminChangeAction } = await import("@/lib/admin/changes/actions");
const { passwordStepUpAction } = await import("@/lib/auth/step-up/actions");

const person = (world: World, id: string) => ({ id, tenantId: world.tenantId });
type Person = ReturnType<typeof person>;

/** The policy form saved with a step-up made for exactly these values. */
async function save(admin: Person, input: PolicyInput) {
  const values = Object.fromEntries(Object.entries(input).map(([name, value]) => [name, String(value)]));
  const holder = await provedFor(admin.id, { kind: "admin.policy", values });
  const saved = await updatePolicy(admin, input, { holder, item: policyItem(values) });
  if ("stepUpRequired" in saved) throw new Error("step-up refused");
  return saved;
}

async function approve(admin: Person, change: { id: string; digest: string }, digest = change.digest) {
  const holder = await provedFor(admin.id, { kind: "admin.change-approved", changeId: change.id, digest });
  return approveChange(admin, change.id, digest, holder);
}

async function policyWith(world: World, changes: Partial<PolicyInput>): Promise<PolicyInput> {
  return { ...(await tenantPolicy(world.tenantId)), ...changes };
}

const changesOf = (world: World) =>
  db.adminChange.findMany({ where: { tenantId: world.tenantId }, orderBy: { createdAt: "asc" } });
const auditOf = async (world: World) =>
  (await db.auditLog.findMany({ where: { tenantId: world.tenantId }, orderBy: { id: "asc" } })).map((row) => [
    row.action,
    row.actorId,
  ]);

describe("the two-admin rule: one admin alone cannot switch human approval off", () => {
  it("a lone admin raising the per-call limit to 10,000,000 cents: the change waits, refunds above the old limit still need approval, every supervisor is told", async () => {
    const world = await createWorld();
    const admin = person(world, world.users.admin);
    const saved = await save(admin, await policyWith(world, { autoLimitCents: 10_000_000 }));
    expect(saved).toMatchObject({ changed: false, held: { mode: "delay" } });
    expect((await tenantPolicy(world.tenantId)).autoLimitCents).toBe(5000);
    const [change] = await changesOf(world);
    expect(change).toMatchObject({
      kind: "policy",
      status: "pending",
      mode: "delay",
      proposedById: admin.id,
      change: { autoLimitCents: 10_000_000 },
      base: { autoLimitCents: 5000 },
    });
    expect(change.applyAt!.getTime() - change.createdAt.getTime()).toBe(86_400_000);
    expect(await auditOf(world)).toEqual([["change.proposed", admin.id]]);
    const supervisorEmail = (await db.user.findUniqueOrThrow({ where: { id: world.users.supervisor } })).email;
    const mails = await db.outboxMessage.findMany({ where: { tenantId: world.tenantId, kind: "admin_change_email" } });
    expect(mails.map((mail) => mail.recipient)).toEqual([supervisorEmail]);
    expect(mails[0].body).toContain("Auto limit: 50.00 USD → 100,000.00 USD");

    const conversation = await agentConversation(world);
    expect((await proposeAsAgent(world, conversation, refund(world.orders.o1004, 6000))).json).toMatchObject({
      kind: "pending_approval",
      code: "approval.required",
    });
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);
  });

  it("the proposer approving their own change is refused, as is a digest other than the one shown; nothing applies", async () => {
    const world = await createWorld();
    const admin = person(world, world.users.admin);
    await secondAdmin(world);
    const saved = await save(admin, await policyWith(world, { autoLimitCents: 10_000_000 }));
    expect(saved.held).toMatchObject({ mode: "second-admin", applyAt: null });
    const [change] = await changesOf(world);
    expect(await approve(admin, change)).toMatchObject({ ok: false, code: "change.own" });
    expect((await tenantPolicy(world.tenantId)).autoLimitCents).toBe(5000);
    expect((await changesOf(world))[0]).toMatchObject({ status: "pending", decidedById: null });
    expect(await auditOf(world)).toEqual([["change.proposed", admin.id]]);
  });

  it("a second admin approves the exact change once, with a step-up made for it: it applies, and approving it again is refused", async () => {
    const world = await createWorld();
    const admin = person(world, world.users.admin);
    const bea = await secondAdmin(world);
    await save(admin, await policyWith(world, { autoLimitCents: 10_000_000 }));
    const [change] = await changesOf(world);
    expect(await approve(bea, change, "0".repeat(64))).toMatchObject({
      ok: false,
      code: "change.digest-mismatch",
    });
    expect(await approve({ id: world.users.otherSupervisor, tenantId: world.otherTenantId }, change)).toMatchObject({
      ok: false,
      code: "not-found",
    });
    const otherChange = { id: change.id, digest: "1".repeat(64) };
    const wrongProof = await provedFor(bea.id, {
      kind: "admin.change-approved",
      changeId: otherChange.id,
      digest: otherChange.digest,
    });
    expect(await approveChange(bea, change.id, change.digest, wrongProof)).toMatchObject({
      ok: false,
      code: "step-up.required",
    });
    expect(await approveChange(bea, change.id, change.digest, await noProof(bea.id))).toMatchObject({
      code: "step-up.required",
    });
    expect((await tenantPolicy(world.tenantId)).autoLimitCents).toBe(5000);
    expect(await approve(bea, change)).toEqual({ ok: true });
    expect((await tenantPolicy(world.tenantId)).autoLimitCents).toBe(10_000_000);
    expect(await approve(bea, change)).toMatchObject({ ok: false, code: "change.decided" });
    expect((await changesOf(world))[0]).toMatchObject({ status: "applied", decidedById: bea.id });
    expect(await auditOf(world)).toEqual([
      ["change.proposed", admin.id],
      ["policy.updated", admin.id],
      ["change.approved", bea.id],
    ]);
  });

  it("a second admin approving a change whose base state changed since is refused, and it never applies", async () => {
    const world = await createWorld();
    const admin = person(world, world.users.admin);
    const bea = await secondAdmin(world);
    await save(admin, await policyWith(world, { autoLimitCents: 10_000_000 }));
    const [change] = await changesOf(world);
    expect(await save(admin, await policyWith(world, { sessionCapCents: 8000 }))).toMatchObject({
      changed: true,
      held: null,
    });
    expect(await approve(bea, change)).toMatchObject({ ok: false, code: "change.stale" });
    expect(await tenantPolicy(world.tenantId)).toMatchObject({ autoLimitCents: 5000, sessionCapCents: 8000 });
    expect((await changesOf(world))[0]).toMatchObject({ status: "superseded", decidedById: bea.id });
  });

  it("an expired change cannot be approved", async () => {
    const world = await createWorld();
    const admin = person(world, world.users.admin);
    const bea = await secondAdmin(world);
    await save(admin, await policyWith(world, { autoLimitCents: 10_000_000 }));
    const [change] = await changesOf(world);
    await db.adminChange.update({ where: { id: change.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await approve(bea, change)).toMatchObject({ ok: false, code: "change.expired" });
    expect((await tenantPolicy(world.tenantId)).autoLimitCents).toBe(5000);
    expect((await changesOf(world))[0]).toMatchObject({ status: "expired" });
  });

  it("a delayed change cancelled by a supervisor never applies; one nobody cancels applies when its delay has passed", async () => {
    const world = await createWorld();
    const admin = person(world, world.users.admin);
    const supervisor = person(world, world.users.supervisor);
    await save(admin, await policyWith(world, { autoLimitCents: 10_000_000 }));
    const [cancelled] = await changesOf(world);
    expect(await cancelChange({ id: world.users.otherSupervisor, tenantId: world.otherTenantId }, cancelled.id)).toBe(
      false,
    );
    expect(await cancelChange(supervisor, cancelled.id)).toBe(true);
    expect(await cancelChange(supervisor, cancelled.id)).toBe(false);
    await db.adminChange.update({ where: { id: cancelled.id }, data: { applyAt: new Date(Date.now() - 1000) } });
    await applyDueChanges();
    expect((await tenantPolicy(world.tenantId)).autoLimitCents).toBe(5000);
    expect(await db.adminChange.findUniqueOrThrow({ where: { id: cancelled.id } })).toMatchObject({
      status: "cancelled",
      decidedById: supervisor.id,
    });

    await save(admin, await policyWith(world, { autoLimitCents: 20_000 }));
    const waiting = (await changesOf(world))[1];
    await applyDueChanges();
    expect((await tenantPolicy(world.tenantId)).autoLimitCents).toBe(5000);
    await db.adminChange.update({ where: { id: waiting.id }, data: { applyAt: new Date(Date.now() - 1000) } });
    await applyDueChanges();
    expect((await tenantPolicy(world.tenantId)).autoLimitCents).toBe(20_000);
    expect(await db.adminChange.findUniqueOrThrow({ where: { id: waiting.id } })).toMatchObject({ status: "applied" });
    expect(await auditOf(world)).toEqual([
      ["change.proposed", admin.id],
      ["change.cancelled", supervisor.id],
      ["change.proposed", admin.id],
      ["policy.updated", admin.id],
      ["change.applied-after-delay", admin.id],
    ]);
  });

  it("tightening applies at once, also in the same save as a held loosening; loosening within the bound applies at once", async () => {
    const world = await createWorld();
    const admin = person(world, world.users.admin);
    const tighter = await policyWith(world, { autoLimitCents: 3000 });
    expect(await updatePolicy(admin, tighter, { holder: await noProof(admin.id), item: "" })).toMatchObject({
      changed: true,
      held: null,
      policy: { autoLimitCents: 3000 },
    });
    expect(await save(admin, await policyWith(world, { autoLimitCents: 8000 }))).toMatchObject({
      changed: true,
      held: null,
      policy: { autoLimitCents: 8000 },
    });
    const mixed = await save(
      admin,
      await policyWith(world, { sessionCapCents: 6000, twoPersonAboveCents: 10_000_000 }),
    );
    expect(mixed).toMatchObject({ changed: true, policy: { sessionCapCents: 6000, twoPersonAboveCents: 50_000 } });
    expect(await tenantPolicy(world.tenantId)).toMatchObject({ sessionCapCents: 6000, twoPersonAboveCents: 50_000 });
    const [held] = await changesOf(world);
    expect(held).toMatchObject({
      base: { sessionCapCents: 6000, twoPersonAboveCents: 50_000 },
      change: { sessionCapCents: 6000, twoPersonAboveCents: 10_000_000 },
    });
    // The bound itself loosens only through the rule.
    await save(admin, await policyWith(world, { secondAdminAboveCents: 10_000_000 }));
    expect((await tenantPolicy(world.tenantId)).secondAdminAboveCents).toBe(10_000);
    expect(await changesOf(world)).toHaveLength(2);
  });

  it("granting refunds and minting a key for an agent who may refund wait for a second admin; the key works only once approved", async () => {
    const world = await createWorld();
    const admin = person(world, world.users.admin);
    const bea = await secondAdmin(world);
    expect(
      await setRefundPermission(
        admin,
        world.users.agent2,
        true,
        await provedFor(admin.id, { kind: "admin.refunds-granted", userId: world.users.agent2 }),
      ),
    ).toMatchObject({ mode: "second-admin" });
    expect((await db.user.findUniqueOrThrow({ where: { id: world.users.agent2 } })).canRefund).toBe(false);
    expect(await setRefundPermission(admin, world.users.agent, false, await noProof(admin.id))).toBe("changed");
    expect(
      await setRefundPermission(
        admin,
        world.users.agent,
        true,
        await provedFor(admin.id, { kind: "admin.refunds-granted", userId: world.users.agent }),
      ),
    ).toMatchObject({ mode: "second-admin" });

    const agent2Change = (await changesOf(world))[0];
    expect(await approve(bea, agent2Change)).toEqual({ ok: true });
    expect((await db.user.findUniqueOrThrow({ where: { id: world.users.agent2 } })).canRefund).toBe(true);

    const created = await createAgentKey(
      admin,
      world.users.agent2,
      await provedFor(admin.id, { kind: "admin.key-created", userId: world.users.agent2 }),
    );
    if (!created.ok || !created.held) throw new Error("a key for a refunding agent waits");
    expect(await authenticateApiKey(`Bearer ${created.key}`)).toBeNull();
    const keyChange = await db.adminChange.findUniqueOrThrow({ where: { id: created.held.id } });
    expect(await approve(admin, keyChange)).toMatchObject({ code: "change.own" });
    expect(await authenticateApiKey(`Bearer ${created.key}`)).toBeNull();
    expect(await approve(bea, keyChange)).toEqual({ ok: true });
    expect(await authenticateApiKey(`Bearer ${created.key}`)).toMatchObject({ userId: world.users.agent2 });

    const another = await createAgentKey(
      admin,
      world.users.agent2,
      await provedFor(admin.id, { kind: "admin.key-created", userId: world.users.agent2 }),
    );
    if (!another.ok || !another.held) throw new Error("a key for a refunding agent waits");
    expect(await cancelChange(bea, another.held.id)).toBe(true);
    expect(await db.apiKey.findUniqueOrThrow({ where: { id: another.id } })).toMatchObject({
      revokedAt: expect.any(Date),
    });
    expect(await authenticateApiKey(`Bearer ${another.key}`)).toBeNull();
  });
});

describe("the two-admin rule: the webhook and self-registered clients, through the admin page's actions", () => {
  const PASSWORD = "an-admins-password";
  const URL = "https://203.0.113.10/hooks/T000/token-in-the-url";
  const SECRET = "whsec_0123456789abcdef";

  /** Signs a person in as the browser is (the cookie in the jar) and gives them a password to step up with. */
  async function signInAs(id: string, role: "ADMIN" | "SUPERVISOR") {
    await db.user.update({ where: { id }, data: { passwordHash: bcrypt.hashSync(PASSWORD, 4) }, select: { id: true } });
    jar.cookie = await personCookie(id, role);
  }

  /** A proof made through the ceremony's own action, in the signed-in session. */
  async function proof(purpose: Parameters<typeof passwordStepUpAction>[0]["purpose"]): Promise<string> {
    const proved = await passwordStepUpAction({ purpose, password: PASSWORD });
    if (!proved.ok) throw new Error(`step-up refused: ${proved.code}`);
    return proved.data.proofId;
  }

  const tenantOf = (world: World) =>
    db.tenant.findUniqueOrThrow({
      where: { id: world.tenantId },
      select: { webhookUrl: true, webhookSecret: true, oauthDcrEnabled: true },
    });

  it("setting the webhook without a proof for that URL changes nothing; with one, a lone admin's webhook waits for the delay, and applies only then", async () => {
    const world = await createWorld();
    await signInAs(world.users.admin, "ADMIN");
    expect(await setWebhookAction({ url: URL, secret: SECRET })).toMatchObject({ ok: false, code: "step-up.required" });
    const forAnother = await proof({ kind: "admin.webhook", url: "https://203.0.113.10/elsewhere" });
    expect(await setWebhookAction({ url: URL, secret: SECRET, proofId: forAnother })).toMatchObject({
      ok: false,
      code: "step-up.required",
    });
    expect(await tenantOf(world)).toMatchObject({ webhookUrl: null, webhookSecret: null });
    expect(await changesOf(world)).toEqual([]);
    expect(await auditOf(world)).toEqual([]);

    const saved = await setWebhookAction({
      url: URL,
      secret: SECRET,
      proofId: await proof({ kind: "admin.webhook", url: URL }),
    });
    expect(saved).toMatchObject({
      ok: true,
      data: { held: expect.stringContaining("unless a supervisor or admin cancels it") },
    });
    expect(await tenantOf(world)).toMatchObject({ webhookUrl: null, webhookSecret: null });
    const [change] = await changesOf(world);
    expect(change).toMatchObject({
      kind: "webhook",
      mode: "delay",
      status: "pending",
      base: { host: null, stored: null },
    });
    expect(await auditOf(world)).toEqual([["change.proposed", world.users.admin]]);
    // The URL and secret stay write-only: encrypted in the held change, named by host in the audit and the email.
    const written = JSON.stringify([
      change.change,
      (await db.auditLog.findMany({ where: { tenantId: world.tenantId } })).map((row) => row.detail),
      await db.outboxMessage.findMany({ where: { tenantId: world.tenantId, kind: "admin_change_email" } }),
    ]);
    expect(written).not.toMatch(/token-in-the-url|whsec_/);
    expect(written).toContain("Approval webhook: none → 203.0.113.10");

    await db.adminChange.update({ where: { id: change.id }, data: { applyAt: new Date(Date.now() - 1000) } });
    await applyDueChanges();
    const stored = await tenantOf(world);
    expect(decryptSecret(stored.webhookUrl!, webhookUrlContext(world.tenantId))).toBe(URL);
    expect(await auditOf(world)).toEqual([
      ["change.proposed", world.users.admin],
      ["webhook.set", world.users.admin],
      ["change.applied-after-delay", world.users.admin],
    ]);
    // Removing it tightens: at once, with no proof.
    expect(await setWebhookAction(null)).toMatchObject({ ok: true, data: { held: null } });
    expect(await tenantOf(world)).toMatchObject({ webhookUrl: null, webhookSecret: null });
  });

  it("with a second admin, a new webhook waits for their approval: not the proposer's, and it goes stale if the webhook changed meanwhile", async () => {
    const world = await createWorld();
    const bea = await secondAdmin(world);
    await signInAs(world.users.admin, "ADMIN");
    const first = await setWebhookAction({
      url: URL,
      secret: SECRET,
      proofId: await proof({ kind: "admin.webhook", url: URL }),
    });
    expect(first).toMatchObject({ ok: true, data: { held: expect.stringContaining("waits for another admin") } });
    const [change] = await changesOf(world);
    expect(change).toMatchObject({ kind: "webhook", mode: "second-admin" });
    const approval = (id: string, digest: string) => ({ kind: "admin.change-approved" as const, changeId: id, digest });
    expect(
      await approveAdminChangeAction({
        changeId: change.id,
        digest: change.digest,
        proofId: await proof(approval(change.id, change.digest)),
      }),
    ).toMatchObject({ ok: false, code: "change.own" });

    await signInAs(bea.id, "ADMIN");
    expect(await approveAdminChangeAction({ changeId: change.id, digest: change.digest })).toMatchObject({
      ok: false,
      code: "step-up.required",
    });
    expect((await tenantOf(world)).webhookUrl).toBeNull();
    expect(
      await approveAdminChangeAction({
        changeId: change.id,
        digest: change.digest,
        proofId: await proof(approval(change.id, change.digest)),
      }),
    ).toEqual({ ok: true, data: undefined });
    const stored = await tenantOf(world);
    expect(decryptSecret(stored.webhookUrl!, webhookUrlContext(world.tenantId))).toBe(URL);

    // A second proposal against this webhook goes stale once the webhook is removed before it is approved.
    await signInAs(world.users.admin, "ADMIN");
    const other = "https://203.0.113.11/hook";
    await setWebhookAction({ url: other, secret: SECRET, proofId: await proof({ kind: "admin.webhook", url: other }) });
    const replacing = (await changesOf(world))[1];
    expect(replacing).toMatchObject({ base: { host: "203.0.113.10", stored: expect.any(String) } });
    expect(await setWebhookAction(null)).toMatchObject({ ok: true });
    await signInAs(bea.id, "ADMIN");
    expect(
      await approveAdminChangeAction({
        changeId: replacing.id,
        digest: replacing.digest,
        proofId: await proof(approval(replacing.id, replacing.digest)),
      }),
    ).toMatchObject({ ok: false, code: "change.stale" });
    expect(await tenantOf(world)).toMatchObject({ webhookUrl: null });
  });

  it("allowing self-registered clients without a proof changes nothing; with one it waits for a second admin (or a lone admin's delay, which a supervisor cancels); refusing them applies at once", async () => {
    const world = await createWorld();
    await signInAs(world.users.admin, "ADMIN");
    expect(await setSelfRegistrationAction({ enabled: true })).toMatchObject({ ok: false, code: "step-up.required" });
    expect((await tenantOf(world)).oauthDcrEnabled).toBe(false);
    expect(await changesOf(world)).toEqual([]);

    // A lone admin: the change waits for the delay; a supervisor cancels it, and it never applies.
    const alone = await setSelfRegistrationAction({
      enabled: true,
      proofId: await proof({ kind: "admin.self-registration" }),
    });
    expect(alone).toMatchObject({
      ok: true,
      data: { held: expect.stringContaining("unless a supervisor or admin cancels it") },
    });
    const [delayed] = await changesOf(world);
    expect(delayed).toMatchObject({ kind: "self-registration", mode: "delay", status: "pending" });
    await signInAs(world.users.supervisor, "SUPERVISOR");
    expect(await cancelAdminChangeAction({ changeId: delayed.id })).toEqual({ ok: true, data: undefined });
    await db.adminChange.update({ where: { id: delayed.id }, data: { applyAt: new Date(Date.now() - 1000) } });
    await applyDueChanges();
    expect((await tenantOf(world)).oauthDcrEnabled).toBe(false);

    // With a second admin: it applies once they approve it with their own proof.
    const bea = await secondAdmin(world);
    await signInAs(world.users.admin, "ADMIN");
    const held = await setSelfRegistrationAction({
      enabled: true,
      proofId: await proof({ kind: "admin.self-registration" }),
    });
    expect(held).toMatchObject({ ok: true, data: { held: expect.stringContaining("waits for another admin") } });
    expect((await tenantOf(world)).oauthDcrEnabled).toBe(false);
    const change = (await changesOf(world))[1];
    expect(change).toMatchObject({ kind: "self-registration", mode: "second-admin" });
    await signInAs(bea.id, "ADMIN");
    expect(
      await approveAdminChangeAction({
        changeId: change.id,
        digest: change.digest,
        proofId: await proof({ kind: "admin.change-approved", changeId: change.id, digest: change.digest }),
      }),
    ).toEqual({ ok: true, data: undefined });
    expect((await tenantOf(world)).oauthDcrEnabled).toBe(true);

    // Refusing them tightens: at once, with no proof.
    expect(await setSelfRegistrationAction({ enabled: false })).toEqual({ ok: true, data: { held: null } });
    expect((await tenantOf(world)).oauthDcrEnabled).toBe(false);
    expect((await auditOf(world)).map(([action]) => action)).toEqual([
      "change.proposed",
      "change.cancelled",
      "change.proposed",
      "oauth.registration-allowed",
      "change.approved",
      "oauth.registration-refused",
    ]);
  });
});
