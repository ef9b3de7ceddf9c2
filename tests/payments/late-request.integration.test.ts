import { describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { closeOverpaid, overpaidRefunds } from "@/lib/payments/reconcile/overpaid";
import { httpPaymentProvider } from "@/lib/payments/provider/provider";
import { reconcileRefunds } from "@/lib/payments/reconcile/reconcile";
import { settleRefund } from "@/lib/payments/refunds";
import { getToolCall } from "../support/api";
import { INSTANCE_SECRET, personCookie } from "../support/app-instances";
import { jar } from "../support/cookie-jar";
import { agentConversation, proposeAsAgent, refund, supervisorOf } from "../support/calls";
import { ownExternals, type Externals } from "../support/externals";
import { expectRefundInvariants } from "../support/invariants";
import { provedFor } from "../support/step-up";
import { createWorld, type World } from "../support/world";

// A refund request can reach the provider after the lookup that said it had not: the provider holds it (the fake
// provider's `delay` fault acts only when the delay ends), the client gives up and its retries find the key in use.
// Reconciliation releases such a refund when the re-check refuses a re-send, and keeps looking its key up until the
// provider forgets it; what the provider made after all, the books follow. Every test ends comparing the provider's
// totals with the books. A refund the books cannot hold is listed for supervisors: the action the Approvals page calls.

vi.mock("next/headers", async () => (await import("../support/cookie-jar")).nextHeadersMock());
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
process.env.NEXTAUTH_SECRET = INSTANCE_SECRET;
const { closeOverpaidAction } = await import("@/lib/payments/reconcile/actions");

const externals = ownExternals();
const LATE_MS = 4000;

/** A refund whose request the provider acts on only `LATE_MS` after it arrived, long after the call gave up on it. */
async function lateRefund(world: World, conversation: string, order: string, amount: number) {
  await externals.faults([{ mode: "delay", ms: LATE_MS }], true);
  const call = await proposeAsAgent(world, conversation, refund(order, amount));
  expect(call.json.code).toBe("refund.outcome-unknown");
  return call.json.id;
}

/** Releases the late refund of `order`: its re-send is refused by a fraud hold, lifted again afterwards. */
async function releaseBeforeItLands(world: World, order: string) {
  await db.order.update({ where: { id: order }, data: { fraudHold: true } });
  expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ released: 1 });
  expect((await externals.stats()).totalsByOrder[order] ?? 0).toBe(0);
  await db.order.update({ where: { id: order }, data: { fraudHold: false } });
}

/** What the provider refunded on `order` is what the books hold as issued refunds: `cents`. */
async function expectProviderEqualsIssued(order: string, cents: number) {
  const issued = await db.refund.aggregate({
    where: { orderId: order, status: "issued" },
    _sum: { amountCents: true },
  });
  expect({ provider: (await externals.stats()).totalsByOrder[order], issued: issued._sum.amountCents }).toEqual({
    provider: cents,
    issued: cents,
  });
}

async function untilTheProviderMade(provider: Externals, order: string, cents: number) {
  for (const deadline = Date.now() + LATE_MS + 5000; Date.now() < deadline;) {
    if ((await provider.stats()).totalsByOrder[order] === cents) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the provider did not make ${cents} on ${order}`);
}

describe("a refund released after the provider's not-found is watched", () => {
  it("when its request reaches the provider late, the next pass books it as issued and the call says so; provider = books", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1004;
    const callId = await lateRefund(world, conversation, order, 3000);
    await releaseBeforeItLands(world, order);
    const released = await db.refund.findFirstOrThrow({ where: { toolCallId: callId } });
    expect(released).toMatchObject({ status: "released", lastError: "not re-sent: order.fraud-hold" });
    expect(released.watchUntil!.getTime()).toBeGreaterThan(Date.now());
    expect((await getToolCall(world.keys.agent, callId)).json.code).toBe("order.fraud-hold");

    await untilTheProviderMade(externals, order, 3000);
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
      examined: 1,
      madeAfterRelease: 1,
    });
    const made = externals.provider.state.made.find((row) => row.order_id === order)!;
    expect(await db.refund.findUniqueOrThrow({ where: { id: released.id } })).toMatchObject({
      status: "issued",
      providerRefundId: made.id,
      watchUntil: null,
      lastError: "made by the provider after it was released here (not re-sent: order.fraud-hold)",
      overpaidAt: null,
    });
    expect(await overpaidRefunds(world.tenantId)).toEqual([]);
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      kind: "executed",
      code: "refund.issued",
    });
    expect(await db.conversation.findUniqueOrThrow({ where: { id: conversation } })).toMatchObject({
      irreversibleCents: 3000,
    });
    // Booked once: the next pass has nothing of it to look up, and the order refuses what it no longer holds.
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ examined: 0 });
    const again = await proposeAsAgent(world, conversation, refund(order, 12_500));
    expect(again.json.code).toBe("amount.exceeds-refundable");
    await expectRefundInvariants([order], (await externals.stats()).totalsByOrder);
  });

  it("when the order was refunded again meanwhile beyond its total, it is issued, the order counts as refunded in full, and the excess is listed until a supervisor closes it with a note; provider = issued refunds", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1001;
    const callId = await lateRefund(world, conversation, order, 2000);
    await releaseBeforeItLands(world, order);
    const second = await proposeAsAgent(world, conversation, refund(order, 2500));
    expect(second.json.code).toBe("refund.issued");

    await untilTheProviderMade(externals, order, 4500);
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
      examined: 1,
      madeAfterRelease: 1,
    });
    const made = externals.provider.state.made.find((row) => row.order_id === order && row.amount_cents === 2000)!;
    const late = await db.refund.findFirstOrThrow({ where: { toolCallId: callId } });
    // The provider paid 45.00 on a 42.00 order: both refunds are issued, and the order counts as refunded in full.
    expect(late).toMatchObject({ status: "issued", watchUntil: null, providerRefundId: made.id, overpaidCents: 300 });
    await expectProviderEqualsIssued(order, 4500);
    expect(await db.order.findUniqueOrThrow({ where: { id: order } })).toMatchObject({
      refundedCents: 4200,
      refundPending: false,
    });
    expect((await getToolCall(world.keys.agent, callId)).json.code).toBe("refund.issued");
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ examined: 0 });
    const more = await proposeAsAgent(world, conversation, refund(order, 100));
    expect(more.json.code).toBe("amount.exceeds-refundable");

    // Listed for the tenant's supervisors until one of them notes what was done; the note goes to the audit log.
    expect((await overpaidRefunds(world.tenantId)).map((row) => row.id)).toEqual([late.id]);
    expect(await overpaidRefunds(world.otherTenantId)).toEqual([]);
    const close = { refundId: late.id, note: "the customer returns 20.00 USD" };
    // Agents and admins are refused by role: settling money with a customer is a supervisor's.
    for (const person of [world.users.agent, world.users.admin]) {
      jar.cookie = await personCookie(person);
      expect(await closeOverpaidAction(close)).toMatchObject({ ok: false, code: "auth.forbidden" });
    }
    jar.cookie = await personCookie(world.users.otherSupervisor);
    expect(await closeOverpaidAction(close)).toMatchObject({ ok: false, code: "overpaid.not-found" });
    jar.cookie = await personCookie(world.users.supervisor);
    expect(await closeOverpaidAction({ ...close, note: "returns\u0000 it" })).toMatchObject({
      ok: false,
      code: "input.invalid",
    });
    // The signed-in supervisor without a step-up (a stolen session) clears nothing; nor does a proof made in another
    // session of theirs.
    expect(await closeOverpaidAction(close)).toMatchObject({ ok: false, code: "overpaid.step-up-required" });
    const supervisor = supervisorOf(world);
    const elsewhere = await provedFor(supervisor.userId, { kind: "overpaid.close", refundId: late.id });
    const holder = await provedFor(supervisor.userId, { kind: "overpaid.close", refundId: late.id });
    expect(
      await closeOverpaid({ ...supervisor, sessionId: holder.sessionId }, { ...close, proofId: elsewhere.proofId }),
    ).toMatchObject({ ok: false, code: "overpaid.step-up-required" });
    const tenants = { tenantId: { in: [world.tenantId, world.otherTenantId] } };
    expect(await db.auditLog.count({ where: tenants })).toBe(0);
    expect((await overpaidRefunds(world.tenantId)).map((row) => row.id)).toEqual([late.id]);
    expect(
      await closeOverpaid({ ...supervisor, sessionId: holder.sessionId }, { ...close, proofId: holder.proofId }),
    ).toMatchObject({ ok: true });
    expect(await closeOverpaidAction(close)).toMatchObject({ ok: false, code: "overpaid.not-found" });
    expect(await overpaidRefunds(world.tenantId)).toEqual([]);
    expect(await db.auditLog.findMany({ where: tenants })).toMatchObject([
      {
        tenantId: world.tenantId,
        actorId: world.users.supervisor,
        action: "refund.overpaid-closed",
        detail: {
          refundId: late.id,
          orderId: order,
          amountCents: 2000,
          overpaidCents: 300,
          providerRefundId: made.id,
          note: close.note,
          stepUp: "password",
        },
      },
    ]);
    expect(await db.refund.findUniqueOrThrow({ where: { id: late.id } })).toMatchObject({
      status: "issued",
      overpaidClosedById: world.users.supervisor,
    });
  });

  it("while its order has another refund unsettled and both would pass its total, a late refund found at the provider waits, the order stays blocked until it is counted, then it is issued against what that one became; provider = issued refunds", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1001;
    const callId = await lateRefund(world, conversation, order, 2000);
    await releaseBeforeItLands(world, order);
    // A second refund the provider makes but whose every answer is lost: unknown, and the order blocked.
    await externals.faults(Array(3).fill({ mode: "drop_response" }), true);
    const second = await proposeAsAgent(world, conversation, refund(order, 2500));
    expect(second.json.code).toBe("refund.outcome-unknown");
    await untilTheProviderMade(externals, order, 4500);

    // The late refund's turn comes first (its release made it due): the order's refunded total still holds the
    // other's reservation, which may yet be given back, so it only keeps what it found.
    // Passes as the job runs them, backing off: a refund the provider cannot settle is not asked again for an hour.
    const pass = () => reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId, backoffMs: 3_600_000 });
    expect(await pass()).toMatchObject({ examined: 2, issued: 1, madeAfterRelease: 0 });
    const made = externals.provider.state.made.find((row) => row.order_id === order && row.amount_cents === 2000)!;
    expect(await db.refund.findFirstOrThrow({ where: { toolCallId: callId } })).toMatchObject({
      status: "released",
      providerRefundId: made.id,
    });
    // The other one settled, but the order is not refundable again until the late one is counted.
    expect(await db.order.findUniqueOrThrow({ where: { id: order } })).toMatchObject({ refundPending: true });
    const meanwhile = await proposeAsAgent(world, conversation, refund(order, 1700));
    expect(meanwhile.json.code).toBe("refund.in-progress");
    // The late one is due again at the next pass, not after a backoff: the order is blocked while it waits.
    expect(await pass()).toMatchObject({ examined: 1, madeAfterRelease: 1 });
    expect(await db.refund.findFirstOrThrow({ where: { toolCallId: callId } })).toMatchObject({
      status: "issued",
      overpaidCents: 300,
    });
    expect(await db.order.findUniqueOrThrow({ where: { id: order } })).toMatchObject({
      refundedCents: 4200,
      refundPending: false,
    });
    await expectProviderEqualsIssued(order, 4500);
    expect((await proposeAsAgent(world, conversation, refund(order, 1700))).json.code).toBe(
      "amount.exceeds-refundable",
    );
  });

  it("a late refund that fits beside its order's unsettled refund is counted at once, whatever that one becomes; provider = issued refunds", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1004;
    const lateCall = await lateRefund(world, conversation, order, 3000);
    await releaseBeforeItLands(world, order);
    await externals.faults(Array(3).fill({ mode: "drop_response" }), true);
    const second = await proposeAsAgent(world, conversation, refund(order, 2500));
    expect(second.json.code).toBe("refund.outcome-unknown");
    await untilTheProviderMade(externals, order, 5500);

    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
      examined: 2,
      issued: 1,
      madeAfterRelease: 1,
    });
    expect(await db.refund.findFirstOrThrow({ where: { toolCallId: lateCall } })).toMatchObject({ status: "issued" });
    await expectRefundInvariants([order], (await externals.stats()).totalsByOrder);
  });

  it("while a late refund waits to be counted, another refund of its order the provider never saw is not sent again: released, and the late one counted; provider = issued refunds", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1001;
    const lateCall = await lateRefund(world, conversation, order, 2000);
    await releaseBeforeItLands(world, order);
    // A second refund every attempt of which meets a 503: the provider never sees it, and it would be re-sent.
    await externals.faults(Array(3).fill({ mode: "unavailable_before" }), true);
    const second = await proposeAsAgent(world, conversation, refund(order, 2500));
    expect(second.json.code).toBe("refund.outcome-unknown");
    await untilTheProviderMade(externals, order, 2000);
    const requests = (await externals.stats()).refundRequests;

    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
      examined: 2,
      released: 1,
      madeAfterRelease: 0,
    });
    expect((await externals.stats()).refundRequests).toBe(requests);
    expect((await getToolCall(world.keys.agent, second.json.id)).json.code).toBe("amount.exceeds-refundable");
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ madeAfterRelease: 1 });
    expect(await db.refund.findFirstOrThrow({ where: { toolCallId: lateCall } })).toMatchObject({
      status: "issued",
      overpaidCents: null,
    });
    expect(await db.order.findUniqueOrThrow({ where: { id: order } })).toMatchObject({
      refundedCents: 2000,
      refundPending: false,
    });
    await expectProviderEqualsIssued(order, 2000);
  });

  it("the call's own answer arriving after its refund was released books it, as a lookup would; provider = books", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1004;
    const callId = await lateRefund(world, conversation, order, 3000);
    await releaseBeforeItLands(world, order);
    await untilTheProviderMade(externals, order, 3000);
    const released = await db.refund.findFirstOrThrow({ where: { toolCallId: callId } });
    const made = externals.provider.state.made.find((row) => row.order_id === order)!;
    // What the call's completion does with the provider's answer when it finally has one.
    expect(await settleRefund(released.id, { kind: "succeeded", refundId: made.id })).toMatchObject({
      code: "refund.issued",
    });
    expect(await db.refund.findUniqueOrThrow({ where: { id: released.id } })).toMatchObject({
      status: "issued",
      providerRefundId: made.id,
      watchUntil: null,
    });
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ examined: 0 });
    await expectRefundInvariants([order], (await externals.stats()).totalsByOrder);
  });

  it("a released refund the provider never makes is looked up until its watch ends, then left alone; provider = books", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1004;
    // Nothing reaches the provider: every attempt meets its 503.
    await externals.faults(Array(3).fill({ mode: "unavailable_before" }), true);
    const call = await proposeAsAgent(world, conversation, refund(order, 3000));
    expect(call.json.code).toBe("refund.outcome-unknown");
    await releaseBeforeItLands(world, order);
    const released = await db.refund.findFirstOrThrow({ where: { toolCallId: call.json.id } });
    const lookups = async () => (await externals.stats()).lookupsByKey[released.providerKey] ?? 0;
    const before = await lookups();

    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
      examined: 1,
      madeAfterRelease: 0,
    });
    expect(await lookups()).toBe(before + 1);
    expect((await db.refund.findUniqueOrThrow({ where: { id: released.id } })).watchUntil).not.toBeNull();

    await db.refund.update({ where: { id: released.id }, data: { watchUntil: new Date(Date.now() - 1000) } });
    // A lookup the provider cannot answer ends nothing, even past the watch's time: only its own answer does.
    const real = httpPaymentProvider({ url: externals.provider.url, secret: externals.provider.secret });
    const unanswered = { ...real, lookup: async () => ({ kind: "uncertain" as const, reason: "no answer" }) };
    expect(await reconcileRefunds({ provider: unanswered, minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
      examined: 1,
    });
    expect((await db.refund.findUniqueOrThrow({ where: { id: released.id } })).watchUntil).not.toBeNull();
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ examined: 1 });
    expect(await db.refund.findUniqueOrThrow({ where: { id: released.id } })).toMatchObject({
      status: "released",
      watchUntil: null,
      lastError: "not re-sent: order.fraud-hold",
    });
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ examined: 0 });
    expect(await lookups()).toBe(before + 2);
    await expectRefundInvariants([order], (await externals.stats()).totalsByOrder);
  });

  it("a refund the provider itself declined is released unwatched: its answer is final", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    await externals.faults([{ mode: "error_before" }], true);
    const call = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 3000));
    expect(call.json.code).toBe("host.error");
    expect(await db.refund.findFirstOrThrow({ where: { toolCallId: call.json.id } })).toMatchObject({
      status: "released",
      watchUntil: null,
    });
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ examined: 0 });
    await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
  });
});
