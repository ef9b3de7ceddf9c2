import { describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { resolveInvestigation } from "@/lib/payments/reconcile/investigations";
import { reconcileRefunds, refundsToInvestigate } from "@/lib/payments/reconcile/reconcile";
import { getToolCall } from "../support/api";
import { agentConversation, proposeAsAgent, supervisorOf } from "../support/calls";
import { ownExternals } from "../support/externals";
import { ownFaultProxy } from "../support/fault-proxy";
import { expectBooksAndVisibleBlocks, expectRefundInvariants } from "../support/invariants";
import { provedFor } from "../support/step-up";
import { createWorld } from "../support/world";
import { INSTANCE_SECRET, personCookie } from "../support/app-instances";
import { jar } from "../support/cookie-jar";

// A supervisor closes what reconciliation could not: the same function the Approvals page's action calls.

vi.mock("next/headers", async () => (await import("../support/cookie-jar")).nextHeadersMock());
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
process.env.NEXTAUTH_SECRET = INSTANCE_SECRET;
const { resolveInvestigationAction } = await import("@/lib/payments/reconcile/actions");

const externals = ownExternals();
const proxy = ownFaultProxy(externals);

/** A refund under investigation: made (or never seen) at the provider, and no lookup could tell within the window. */
async function investigated(made: boolean) {
  const world = await createWorld();
  const conversation = await agentConversation(world);
  proxy.faults(Array(3).fill({ mode: made ? "cut" : "reset" }));
  const call = await proposeAsAgent(world, conversation, {
    name: "issue_refund",
    arguments: { order_id: world.orders.o1004, amount_cents: 3000, currency: "USD", reason: "damaged" },
  });
  expect(call.json.code).toBe("refund.outcome-unknown");
  proxy.faults([{ mode: "pass" }, { mode: "answer", status: 502 }]);
  expect(await reconcileRefunds({ minAgeMs: 0, investigateAfterMs: 0, tenantId: world.tenantId })).toMatchObject({
    investigate: 1,
  });
  const [item] = await refundsToInvestigate(world.tenantId);
  await expectBooksAndVisibleBlocks([world.orders.o1004], (await externals.stats()).totalsByOrder);
  return { world, conversation, callId: call.json.id, refundId: item.id };
}

describe("investigations are decided by people", () => {
  it("closed as issued with the provider's reference: audited, the order unblocked, the call executed; provider = books", async () => {
    const { world, callId, refundId } = await investigated(true);
    const made = externals.provider.state.made.find((refund) => refund.order_id === world.orders.o1004)!;
    const result = await resolveInvestigation(supervisorOf(world), {
      refundId,
      resolution: "issued",
      providerRefundId: made.id,
    });
    expect(result).toMatchObject({ ok: true, data: { outcome: { code: "refund.issued" } } });
    expect(await db.refund.findUniqueOrThrow({ where: { id: refundId } })).toMatchObject({
      status: "issued",
      providerRefundId: made.id,
      resolvedById: world.users.supervisor,
    });
    expect(await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).toMatchObject({
      refundPending: false,
      refundedCents: 3000,
    });
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      kind: "executed",
      code: "refund.issued",
      model: { status: "ok" },
    });
    const audit = await db.auditLog.findMany({ where: { tenantId: world.tenantId } });
    expect(audit).toMatchObject([
      {
        actorId: world.users.supervisor,
        action: "refund.investigation-issued",
        detail: { refundId, providerRefundId: made.id, amountCents: 3000 },
      },
    ]);
    const log = await db.decisionLog.findMany({ where: { toolCallId: callId }, orderBy: { id: "asc" } });
    expect(log.at(-1)).toMatchObject({ code: "refund.issued", actorId: world.users.supervisor });
    expect(await refundsToInvestigate(world.tenantId)).toEqual([]);
    await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
  });

  it("closed as released with a note: the reservation is given back, the order refundable again, the call says so; provider = books", async () => {
    const { world, conversation, callId, refundId } = await investigated(false);
    const release = {
      refundId,
      resolution: "released" as const,
      note: "provider support confirms no refund under this key",
    };
    // Without the supervisor's step-up for this refund, from this session, nothing is released.
    const holder = await provedFor(world.users.supervisor, { kind: "investigation.release", refundId });
    const elsewhere = await provedFor(world.users.supervisor, { kind: "investigation.release", refundId });
    for (const attempt of [
      resolveInvestigation({ ...supervisorOf(world), sessionId: holder.sessionId }, release),
      resolveInvestigation(
        { ...supervisorOf(world), sessionId: holder.sessionId },
        { ...release, proofId: elsewhere.proofId },
      ),
    ]) {
      expect(await attempt).toMatchObject({ ok: false, code: "investigation.step-up-required" });
    }
    expect((await db.refund.findUniqueOrThrow({ where: { id: refundId } })).status).toBe("investigate");
    const result = await resolveInvestigation(
      { ...supervisorOf(world), sessionId: holder.sessionId },
      { ...release, proofId: holder.proofId },
    );
    expect(result).toMatchObject({ ok: true, data: { outcome: { code: "host.error" } } });
    const released = await db.refund.findUniqueOrThrow({ where: { id: refundId } });
    expect(released).toMatchObject({
      status: "released",
      lastError: "released by a supervisor: provider support confirms no refund under this key",
    });
    // The provider did not know the key when asked: reconciliation keeps looking, in case its request was late.
    expect(released.watchUntil!.getTime()).toBeGreaterThan(Date.now());
    expect(await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).toMatchObject({
      refundPending: false,
      refundedCents: 0,
    });
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      code: "host.error",
      model: { status: "unavailable", reason: "The payment provider did not make this refund: nothing was paid." },
    });
    expect(JSON.stringify((await getToolCall(world.keys.agent, callId)).json)).not.toContain("provider support");
    expect(
      await db.auditLog.count({ where: { tenantId: world.tenantId, action: "refund.investigation-released" } }),
    ).toBe(1);
    await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
    const again = await proposeAsAgent(world, conversation, {
      name: "issue_refund",
      arguments: { order_id: world.orders.o1004, amount_cents: 3000, currency: "USD", reason: "damaged" },
    });
    expect(again.json.code).toBe("refund.issued");
  });

  it("a supervisor's finding that contradicts the provider's own answer is refused: nothing closed, nothing audited; provider = books", async () => {
    const { world, conversation, callId, refundId } = await investigated(true);
    const made = externals.provider.state.made.find((refund) => refund.order_id === world.orders.o1004)!;
    const holder = await provedFor(world.users.supervisor, { kind: "investigation.release", refundId });
    const release = {
      refundId,
      resolution: "released" as const,
      note: "looked it up: nothing under this key",
      proofId: holder.proofId,
    };
    for (const attempt of [
      () => resolveInvestigation({ ...supervisorOf(world), sessionId: holder.sessionId }, release),
      () =>
        resolveInvestigation(supervisorOf(world), { refundId, resolution: "issued", providerRefundId: "re_made_up" }),
    ]) {
      expect(await attempt()).toMatchObject({
        ok: false,
        code: "investigation.provider-disagrees",
        message: expect.stringContaining(made.id),
      });
    }
    expect(await db.refund.findUniqueOrThrow({ where: { id: refundId } })).toMatchObject({ status: "investigate" });
    expect(await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).toMatchObject({
      refundPending: true,
      refundedCents: 3000,
    });
    expect(await db.auditLog.count({ where: { tenantId: world.tenantId } })).toBe(0);
    // The proof was not spent on a refused release, and the order stays blocked for a second refund.
    expect((await db.stepUpProof.findUniqueOrThrow({ where: { id: holder.proofId } })).usedFor).toEqual([]);
    const again = await proposeAsAgent(world, conversation, {
      name: "issue_refund",
      arguments: { order_id: world.orders.o1004, amount_cents: 3000, currency: "USD", reason: "damaged" },
    });
    expect(again.json.code).toBe("refund.in-progress");
    await expectBooksAndVisibleBlocks([world.orders.o1004], (await externals.stats()).totalsByOrder);
    // What the provider says is what closes it: as issued under its own reference.
    const result = await resolveInvestigation(supervisorOf(world), {
      refundId,
      resolution: "issued",
      providerRefundId: made.id,
    });
    expect(result).toMatchObject({ ok: true, data: { outcome: { code: "refund.issued" } } });
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({ code: "refund.issued" });
    await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
  });

  it("a note or refund id the database cannot store is the action's input.invalid: nothing closed, nothing audited", async () => {
    const { world, refundId } = await investigated(false);
    jar.cookie = await personCookie(world.users.supervisor);
    for (const input of [
      { refundId, resolution: "released" as const, note: "checked\u0000 twice" },
      { refundId, resolution: "released" as const, note: "checked \udc00 twice" },
      { refundId: `${refundId}\u0000`, resolution: "released" as const, note: "checked twice" },
    ]) {
      expect(await resolveInvestigationAction(input)).toMatchObject({ ok: false, code: "input.invalid" });
    }
    expect((await db.refund.findUniqueOrThrow({ where: { id: refundId } })).status).toBe("investigate");
    expect(await db.auditLog.count({ where: { tenantId: world.tenantId } })).toBe(0);
    await expectBooksAndVisibleBlocks([world.orders.o1004], (await externals.stats()).totalsByOrder);
  });

  it("only a supervisor of the refund's tenant decides, once; a refused decision changes nothing", async () => {
    const { world, refundId } = await investigated(true);
    const release = { refundId, resolution: "released" as const, note: "checked" };
    expect(
      await resolveInvestigation({ ...supervisorOf(world), role: "AGENT", userId: world.users.agent }, release),
    ).toMatchObject({ ok: false, code: "investigation.forbidden" });
    expect(
      await resolveInvestigation(
        { userId: world.users.otherSupervisor, tenantId: world.otherTenantId, role: "SUPERVISOR" },
        release,
      ),
    ).toMatchObject({
      ok: false,
      code: "investigation.not-found",
    });
    expect((await db.refund.findUniqueOrThrow({ where: { id: refundId } })).status).toBe("investigate");
    expect(await db.auditLog.count({ where: { tenantId: { in: [world.tenantId, world.otherTenantId] } } })).toBe(0);
    const made = externals.provider.state.made.find((refund) => refund.order_id === world.orders.o1004)!;
    expect(
      (await resolveInvestigation(supervisorOf(world), { refundId, resolution: "issued", providerRefundId: made.id }))
        .ok,
    ).toBe(true);
    expect(await resolveInvestigation(supervisorOf(world), release)).toMatchObject({
      ok: false,
      code: "investigation.already-closed",
    });
    await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
  });
});
