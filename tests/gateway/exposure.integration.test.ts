import { beforeAll, describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db } from "@/lib/db";
import { pruneAutoExposure } from "@/lib/gateway/decide/policy";
import { conversationFor, newCallKey, openConversation, propose } from "../support/api";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { expectNoEffect } from "../support/effects";
import { refundOnMovedOrder } from "../support/moved-order";
import { ownExternals } from "../support/externals";
import { createWorld, moreOrders, type WorldPolicy } from "../support/world";
import { SECOND_REFUND_WAITS } from "../policy-rules/examples";
import { putRules } from "../policy-rules/support";
import { holdOpen, waitForLockWaiter } from "../support/locks";

const externals = ownExternals();
// Thirty refunds reach the provider at once in the parallel test; none of them should look lost.
beforeAll(() => void (process.env.PAYMENT_PROVIDER_TIMEOUT_MS = "5000"));

/** Delivered orders of 100.00 USD for cu_ana, as many as a test spends on. */
async function autoExposure(tenantId: string) {
  const sum = await db.autoExposure.aggregate({ where: { tenantId }, _sum: { amountCents: true }, _count: true });
  return { cents: sum._sum.amountCents ?? 0, rows: sum._count };
}

/** The running totals of the tenant ('tenant') and of each of its agents, in cents. */
async function runningTotals(tenantId: string) {
  const rows = await db.exposureTotal.findMany({ where: { tenantId } });
  return Object.fromEntries(rows.map((row) => [row.agentId || "tenant", Number(row.runningCents)]));
}

async function worldWith(policy: WorldPolicy) {
  const world = await createWorld({ rateKeyPerMin: 10_000, ...policy });
  // A second agent of the same tenant who may refund, for the tenant-wide ceiling.
  await db.user.update({ where: { id: world.users.agent2 }, data: { canRefund: true } });
  return world;
}

/**
 * A tenant with one refund made, a conversation and a fresh order, and another transaction holding the tenant's
 * running total as another instance's refund does between its reservation and its commit, until `release()`.
 */
async function refundedOnceTotalHeld() {
  const world = await worldWith({ agentDailyCeilingCents: 12_000 });
  const [first, order] = await moreOrders(world, 2);
  const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
  expect((await proposeAsAgent(world, conversation, refund(first, 500))).json.code).toBe("refund.issued");
  const held = await holdOpen(
    (tx) => tx.$queryRaw`
      SELECT 1 FROM "ExposureTotal" WHERE "tenantId" = ${world.tenantId} AND "agentId" = '' FOR NO KEY UPDATE`,
  );
  return { world, conversation, order, holder: held.done, holderPid: held.pid, release: held.release };
}

describe("exposure ceilings across conversations (rolling 24 hours, automatic irreversible impact only)", () => {
  it("an agent's refunds across conversations stop at the agent ceiling: the next waits, and its preview names the ceiling", async () => {
    const world = await worldWith({ agentDailyCeilingCents: 10_000 });
    const orders = await moreOrders(world, 3);
    const codes = [];
    for (const order of orders.slice(0, 2)) {
      const conversation = await agentConversation(world);
      codes.push((await proposeAsAgent(world, conversation, refund(order, 4000))).json.code);
    }
    expect(codes).toEqual(["refund.issued", "refund.issued"]);
    const conversation = await agentConversation(world);
    const held = await expectNoEffect(world, () => proposeAsAgent(world, conversation, refund(orders[2], 4000)));
    expect(held.json).toMatchObject({
      kind: "pending_approval",
      stage: "approval",
      code: "approval.required",
      model: { status: "needs_approval" },
    });
    expect(held.json.approval!.preview.ceiling).toEqual({
      name: "agent_daily_ceiling_cents",
      limit_cents: 10_000,
      used_cents: 8000,
      window_hours: 24,
    });
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 8000, rows: 2 });
    // The tenant's part of the refused reservation was given back.
    expect(await runningTotals(world.tenantId)).toEqual({ tenant: 8000, [world.users.agent]: 8000 });
    // Within the ceiling, a smaller refund still runs on its own.
    expect((await proposeAsAgent(world, conversation, refund(orders[2], 2000))).json.code).toBe("refund.issued");
  });

  it("under a rule on the agent's refunds today the reservation comes first, alone: a refusal gives the tenant's part back", async () => {
    const world = await worldWith({ agentDailyCeilingCents: 1000 });
    await putRules(world, SECOND_REFUND_WAITS);
    const [order] = await moreOrders(world, 1);
    const conversation = await agentConversation(world);
    const held = await expectNoEffect(world, () => proposeAsAgent(world, conversation, refund(order, 2000)));
    expect(held.json.code).toBe("approval.required");
    expect(held.json.approval!.preview.ceiling).toEqual({
      name: "agent_daily_ceiling_cents",
      limit_cents: 1000,
      used_cents: 0,
      window_hours: 24,
    });
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 0, rows: 0 });
    expect(await runningTotals(world.tenantId)).toEqual({ tenant: 0 });
  });

  it("the tenant ceiling counts every agent of the tenant, and says so in the preview", async () => {
    const world = await worldWith({ tenantDailyCeilingCents: 6000 });
    const [first, second] = await moreOrders(world, 2);
    const one = await agentConversation(world);
    expect((await proposeAsAgent(world, one, refund(first, 4000))).json.code).toBe("refund.issued");
    const two = await conversationFor(world.keys.agent2, { customer_id: world.customers.ana });
    const held = await expectNoEffect(world, () => propose(world.keys.agent2, two, refund(second, 4000), newCallKey()));
    expect(held.json.code).toBe("approval.required");
    expect(held.json.approval!.preview.ceiling).toEqual({
      name: "tenant_daily_ceiling_cents",
      limit_cents: 6000,
      used_cents: 4000,
      window_hours: 24,
    });
    // The refused reservation took nothing: the running totals are the first refund's.
    expect(await runningTotals(world.tenantId)).toEqual({ tenant: 4000, [world.users.agent]: 4000 });
    // Another tenant's spending is its own.
    const other = await conversationFor(world.keys.otherAgent, { customer_id: world.customers.gil });
    expect(
      (await propose(world.keys.otherAgent, other, refund(world.orders.o2001, 4000), newCallKey())).json.code,
    ).toBe("refund.issued");
  });

  it("an approved refund executes but does not count: only automatic impact fills the ceiling", async () => {
    const world = await worldWith({ agentDailyCeilingCents: 5000 });
    const [first, second, third] = await moreOrders(world, 3);
    const conversation = await agentConversation(world);
    expect((await proposeAsAgent(world, conversation, refund(first, 4000))).json.code).toBe("refund.issued");
    const held = await proposeAsAgent(world, conversation, refund(second, 2000));
    expect(held.json.approval?.preview.ceiling).toMatchObject({ name: "agent_daily_ceiling_cents", used_cents: 4000 });
    const approved = await approveRequest(
      { userId: world.users.supervisor, tenantId: world.tenantId, role: "SUPERVISOR" },
      held.json.approval!.id,
    );
    expect(approved).toMatchObject({ ok: true, status: "approved", outcome: { code: "refund.issued" } });
    expect((await db.order.findUniqueOrThrow({ where: { id: second } })).refundedCents).toBe(2000);
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 4000, rows: 1 });
    expect((await proposeAsAgent(world, conversation, refund(third, 1000))).json.code).toBe("refund.issued");
  });

  it("the window rolls: impact older than 24 hours no longer counts", async () => {
    const world = await worldWith({ agentDailyCeilingCents: 5000 });
    const [first, second] = await moreOrders(world, 2);
    const conversation = await agentConversation(world);
    expect((await proposeAsAgent(world, conversation, refund(first, 4000))).json.code).toBe("refund.issued");
    expect((await proposeAsAgent(world, conversation, refund(second, 2000))).json.code).toBe("approval.required");
    await db.autoExposure.updateMany({
      where: { tenantId: world.tenantId },
      data: { createdAt: new Date(Date.now() - 24 * 3600_000 - 1000) },
    });
    const next = await agentConversation(world);
    expect((await proposeAsAgent(world, next, refund(second, 2000))).json.code).toBe("refund.issued");
  });

  it("the prune job drops only exposure past every window", async () => {
    const world = await worldWith({});
    const [first, second] = await moreOrders(world, 2);
    const conversation = await agentConversation(world);
    await proposeAsAgent(world, conversation, refund(first, 1000));
    await proposeAsAgent(world, conversation, refund(second, 2000));
    await db.autoExposure.updateMany({
      where: { tenantId: world.tenantId, amountCents: 1000 },
      data: { createdAt: new Date(Date.now() - 26 * 3600_000) },
    });
    await pruneAutoExposure(db);
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 2000, rows: 1 });
  });

  it("a ceiling lowered by an admin applies to the next call", async () => {
    const world = await worldWith({});
    const [first, second] = await moreOrders(world, 2);
    const conversation = await agentConversation(world);
    expect((await proposeAsAgent(world, conversation, refund(first, 3000))).json.code).toBe("refund.issued");
    await db.tenant.update({ where: { id: world.tenantId }, data: { tenantDailyCeilingCents: 4000 } });
    const held = await proposeAsAgent(world, conversation, refund(second, 1500));
    expect(held.json.approval?.preview.ceiling).toEqual({
      name: "tenant_daily_ceiling_cents",
      limit_cents: 4000,
      used_cents: 3000,
      window_hours: 24,
    });
  });

  it("100 parallel refunds across 50 conversations never auto-execute past the ceilings", async () => {
    const world = await worldWith({ agentDailyCeilingCents: 12_000, tenantDailyCeilingCents: 15_000 });
    const orders = await moreOrders(world, 100);
    const conversations = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        conversationFor(index % 2 ? world.keys.agent2 : world.keys.agent, { customer_id: world.customers.ana }),
      ),
    );
    const responses = await Promise.all(
      orders.map((order, index) =>
        propose(
          index % 2 ? world.keys.agent2 : world.keys.agent,
          conversations[index % 50],
          refund(order, 500),
          newCallKey(),
        ),
      ),
    );
    const codes = responses.map((response) => response.json.code);
    expect(codes.filter((code) => code !== "refund.issued" && code !== "approval.required")).toEqual([]);
    // Each agent stays under 12000 and both together stop at exactly the tenant's 15000: 30 refunds of 500.
    expect(codes.filter((code) => code === "refund.issued")).toHaveLength(30);
    const refunds = await db.refund.findMany({
      where: { tenantId: world.tenantId },
      select: { amountCents: true, toolCall: { select: { conversation: { select: { agentId: true } } } } },
    });
    const byAgent = (agent: string) =>
      refunds
        .filter((row) => row.toolCall.conversation.agentId === agent)
        .reduce((sum, row) => sum + row.amountCents, 0);
    expect(byAgent(world.users.agent)).toBeLessThanOrEqual(12_000);
    expect(byAgent(world.users.agent2)).toBeLessThanOrEqual(12_000);
    expect(refunds.reduce((sum, row) => sum + row.amountCents, 0)).toBe(15_000);
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 15_000, rows: 30 });
    expect(await db.approvalRequest.count({ where: { tenantId: world.tenantId, status: "pending" } })).toBe(70);
    // The provider's books and ours agree.
    const stats = await externals.stats();
    expect(orders.reduce((sum, order) => sum + (stats.totalsByOrder[order] ?? 0), 0)).toBe(15_000);
  });

  it("an automatic refund reserves under the tenant's running total: it waits while another transaction holds that row", async () => {
    const { world, conversation, order, holder, release } = await refundedOnceTotalHeld();
    let answered = false;
    const proposal = propose(world.keys.agent, conversation, refund(order, 500), newCallKey()).then((response) => {
      answered = true;
      return response;
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(answered).toBe(false);
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 500, rows: 1 });
    release();
    await holder;
    expect((await proposal).json.code).toBe("refund.issued");
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 1000, rows: 2 });
  });

  it("a refund whose order moved on while it waited for the ceilings' locks commits nothing, and is checked again on the order as it is", async () => {
    const { world, conversation, order, holder, holderPid, release } = await refundedOnceTotalHeld();
    const proposal = propose(world.keys.agent, conversation, refund(order, 700), newCallKey());
    // The refund's statement waits at the reservation; meanwhile another refund takes all the order has left.
    await waitForLockWaiter(holderPid, "a lock on a running total");
    await db.order.update({ where: { id: order }, data: { refundedCents: 10_000, version: { increment: 1 } } });
    release();
    await holder;
    expect((await proposal).json.code).toBe("amount.exceeds-refundable");
    expect(await runningTotals(world.tenantId)).toEqual({ tenant: 500, [world.users.agent]: 500 });
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 500, rows: 1 });
    expect(await db.refund.count({ where: { orderId: order } })).toBe(0);
    expect((await externals.stats()).totalsByOrder[order]).toBeUndefined();
  });

  it("a refund whose order moved on in a way that still allows it runs once, reserved once, on the order as it now is", async () => {
    const { world, conversation, order, holder, holderPid, release } = await refundedOnceTotalHeld();
    const proposal = propose(world.keys.agent, conversation, refund(order, 700), newCallKey());
    await waitForLockWaiter(holderPid, "a lock on a running total");
    await db.order.update({ where: { id: order }, data: { postalCode: "94110", version: { increment: 1 } } });
    release();
    await holder;
    expect((await proposal).json.code).toBe("refund.issued");
    expect(await runningTotals(world.tenantId)).toEqual({ tenant: 1200, [world.users.agent]: 1200 });
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 1200, rows: 2 });
    expect(await db.refund.count({ where: { orderId: order, status: "issued" } })).toBe(1);
    expect((await externals.stats()).totalsByOrder[order]).toBe(700);
  });

  it("an effect that reserves in a transaction committing on its own gives its reservation back when the order moved on", async () => {
    // The path a refund's second try takes (docs/decisions/029), with the order moving on once more before its statement.
    const world = await worldWith({ agentDailyCeilingCents: 12_000 });
    const [order] = await moreOrders(world, 1);
    const { result } = await refundOnMovedOrder(world, order, 700, { reserve: true });
    expect(result).toMatchObject({ code: "order.changed" });
    expect(await runningTotals(world.tenantId)).toEqual({ tenant: 0, [world.users.agent]: 0 });
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 0, rows: 0 });
    expect(await db.refund.count({ where: { orderId: order } })).toBe(0);
  });

  it("16 refunds of one tenant at once against a ceiling only 5 fit under: exactly 5 execute, the rest wait for a person", async () => {
    const world = await worldWith({ tenantDailyCeilingCents: 3500, agentDailyCeilingCents: 100_000 });
    const orders = await moreOrders(world, 16);
    const conversations = await Promise.all(orders.map(() => agentConversation(world)));
    const responses = await Promise.all(
      orders.map((order, index) => proposeAsAgent(world, conversations[index], refund(order, 700))),
    );
    const codes = responses.map((response) => response.json.code).sort();
    expect(codes).toEqual([...Array(5).fill("refund.issued"), ...Array(11).fill("approval.required")].sort());
    for (const response of responses.filter((one) => one.json.code === "approval.required")) {
      expect(response.json.approval!.preview.ceiling).toEqual({
        name: "tenant_daily_ceiling_cents",
        limit_cents: 3500,
        used_cents: 3500,
        window_hours: 24,
      });
    }
    expect(await autoExposure(world.tenantId)).toEqual({ cents: 3500, rows: 5 });
    expect(await db.refund.count({ where: { tenantId: world.tenantId } })).toBe(5);
    const stats = await externals.stats();
    expect(orders.reduce((sum, order) => sum + (stats.totalsByOrder[order] ?? 0), 0)).toBe(3500);
    expect((await runningTotals(world.tenantId)).tenant).toBe(3500);
  });

  it("the window is exact at its edge: a refund made just over 24 hours ago no longer counts, one just under does", async () => {
    const world = await worldWith({ agentDailyCeilingCents: 5000 });
    const [first, second, third] = await moreOrders(world, 3);
    const conversation = await agentConversation(world);
    expect((await proposeAsAgent(world, conversation, refund(first, 3000))).json.code).toBe("refund.issued");
    expect((await proposeAsAgent(world, conversation, refund(second, 1500))).json.code).toBe("refund.issued");
    // The 30.00 refund just inside the window, the 15.00 one just outside... then the other way round.
    const age = (seconds: number) => new Date(Date.now() - seconds * 1000);
    await db.autoExposure.updateMany({
      where: { tenantId: world.tenantId, amountCents: 3000 },
      data: { createdAt: age(86_400 + 120) },
    });
    await db.autoExposure.updateMany({
      where: { tenantId: world.tenantId, amountCents: 1500 },
      data: { createdAt: age(86_400 - 120) },
    });
    const next = await agentConversation(world);
    const held = await proposeAsAgent(world, next, refund(third, 3600));
    expect(held.json.approval?.preview.ceiling).toMatchObject({ name: "agent_daily_ceiling_cents", used_cents: 1500 });
    expect((await proposeAsAgent(world, next, refund(third, 3500))).json.code).toBe("refund.issued");
  });
});

describe("opening conversations is rate-limited per key", () => {
  it("past rateOpenPerMin a key gets 429 rate.limited with Retry-After and no conversation; another key is unaffected", async () => {
    const world = await createWorld({ rateOpenPerMin: 3 });
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await openConversation(world.keys.agent, { customer_id: world.customers.ana })).status);
    expect(statuses).toEqual([201, 201, 201]);
    const limited = await openConversation(world.keys.agent, { customer_id: world.customers.ana });
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: { code: "rate.limited", message: expect.any(String) } });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await db.conversation.count({ where: { agentId: world.users.agent } })).toBe(3);
    expect((await openConversation(world.keys.agent2, { customer_id: world.customers.ana })).status).toBe(201);
  });
});
