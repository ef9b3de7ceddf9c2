import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db } from "@/lib/db";
import { instanceMetrics } from "@/lib/instance/metrics";
import { httpPaymentProvider } from "@/lib/payments/provider/provider";
import { reconcileHealth, reconcileRefunds } from "@/lib/payments/reconcile/reconcile";
import { getToolCall } from "../support/api";
import { agentConversation, holdRefund, proposeAsAgent, refund, supervisorOf } from "../support/calls";
import { ownExternals } from "../support/externals";
import { ownFaultProxy, type ProxyFault } from "../support/fault-proxy";
import { expectBooksAndVisibleBlocks, expectRefundInvariants } from "../support/invariants";
import { createWorld, moreOrders, NO_DUPLICATE_GUARD, type World } from "../support/world";

// Money moves once: the app talks to the provider through a TCP proxy that cuts, resets, delays and rewrites,
// and every scenario ends by comparing the provider's totals with the books.

const externals = ownExternals();
const proxy = ownFaultProxy(externals);

async function setup() {
  const world = await createWorld();
  const conversation = await agentConversation(world);
  return { world, conversation };
}

describe("only the provider can say no", () => {
  const intermediaries: [string, ProxyFault][] = [400, 401, 403, 404, 408].flatMap((status): [string, ProxyFault][] => [
    [`an intermediary's own ${status}`, { mode: "answer", status }],
    [`the provider's answer rewritten to ${status}`, { mode: "status", status }],
  ]);
  for (const [name, fault] of intermediaries) {
    it(`a cut answer, then ${name}: the refund stays unknown, reconciliation finds it issued, provider = books`, async () => {
      const { world, conversation } = await setup();
      // ord_1001 is 42.00: a 40.00 refund made twice would exceed it.
      proxy.faults([{ mode: "cut" }, fault, fault]);
      const first = await proposeAsAgent(world, conversation, refund(world.orders.o1001, 4000));
      expect(first.json).toMatchObject({ kind: "unavailable", code: "refund.outcome-unknown" });
      expect((await externals.stats()).totalsByOrder[world.orders.o1001]).toBe(4000);

      const again = await proposeAsAgent(world, conversation, refund(world.orders.o1001, 100));
      expect(again.json.code).toBe("refund.in-progress");
      await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
      expect((await getToolCall(world.keys.agent, first.json.id)).json).toMatchObject({
        kind: "executed",
        code: "refund.issued",
      });
      const third = await proposeAsAgent(world, conversation, refund(world.orders.o1001, 4000));
      expect(third.json.code).toBe("amount.exceeds-refundable");
      await expectRefundInvariants([world.orders.o1001], (await externals.stats()).totalsByOrder);
    });
  }

  it("answers held back past the client's timeout leave the refund unknown; one provider refund, settled by reconciliation", async () => {
    const { world, conversation } = await setup();
    proxy.faults(Array(3).fill({ mode: "delay", ms: 800 }));
    const first = await proposeAsAgent(world, conversation, refund(world.orders.o1001, 4000));
    expect(first.json).toMatchObject({ code: "refund.outcome-unknown", model: { status: "pending_confirmation" } });
    await new Promise((resolve) => setTimeout(resolve, 900));
    await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    expect((await getToolCall(world.keys.agent, first.json.id)).json.code).toBe("refund.issued");
    await expectRefundInvariants([world.orders.o1001], (await externals.stats()).totalsByOrder);
  });

  it("an intermediary's 4xx on the first attempt, with nothing forwarded, is still not a refusal", async () => {
    const { world, conversation } = await setup();
    proxy.faults([{ mode: "answer", status: 403 }, { mode: "reset" }, { mode: "answer", status: 400 }]);
    const first = await proposeAsAgent(world, conversation, refund(world.orders.o1001, 4000));
    expect(first.json).toMatchObject({ code: "refund.outcome-unknown" });
    await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    expect((await getToolCall(world.keys.agent, first.json.id)).json.code).toBe("refund.issued");
    await expectRefundInvariants([world.orders.o1001], (await externals.stats()).totalsByOrder);
  });
});

/** A refund the provider never saw: every attempt's connection is reset before anything is forwarded. */
async function neverSeen(world: World, conversation: string, order: string, amount: number) {
  proxy.faults([{ mode: "reset" }, { mode: "reset" }, { mode: "reset" }]);
  const call = await proposeAsAgent(world, conversation, refund(order, amount));
  expect(call.json.code).toBe("refund.outcome-unknown");
  return call.json.id;
}

/** A refund the provider made whose answer never arrived. */
async function madeButLost(world: World, conversation: string, order: string, amount: number) {
  proxy.faults([{ mode: "cut" }, { mode: "cut" }, { mode: "cut" }]);
  const call = await proposeAsAgent(world, conversation, refund(order, amount));
  expect(call.json.code).toBe("refund.outcome-unknown");
  return call.json.id;
}

const statuses = async (orders: string[]) =>
  (await db.refund.findMany({ where: { orderId: { in: orders } }, orderBy: { orderId: "asc" } })).map(
    (row) => row.status,
  );

describe("reconciliation cannot be fooled by configuration", () => {
  for (const [name, url, secret] of [
    ["a wrong base path", () => `${proxy.url}/wrong/base`, () => externals.provider.secret],
    ["a rotated secret", () => proxy.url, () => "sk_rotated"],
    ["a provider that does not answer", () => "http://127.0.0.1:1", () => externals.provider.secret],
  ] as const) {
    it(`with ${name}, a pass does nothing, says why, and a correct pass afterwards settles every refund once`, async () => {
      const { world, conversation } = await setup();
      await madeButLost(world, conversation, world.orders.o1001, 4000);
      await neverSeen(world, conversation, world.orders.o1004, 3000);
      const orders = [world.orders.o1001, world.orders.o1004];
      const misconfigured = httpPaymentProvider({ url: url(), secret: secret(), attempts: 1, timeoutMs: 300 });
      const report = await reconcileRefunds({ provider: misconfigured, minAgeMs: 0, tenantId: world.tenantId });
      expect(report).toMatchObject({ examined: 0, released: 0, issued: 0 });
      expect(report.paused).toBeTruthy();
      expect(await statuses(orders)).toEqual(["unknown", "unknown"]);
      expect(await reconcileHealth()).toMatchObject({ ok: false, reason: report.paused });
      expect((await instanceMetrics(db)).body).toMatch(/^toolgate_reconcile_provider_reachable 0$/m);

      expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
        examined: 2,
        issued: 2,
        released: 0,
      });
      expect(await reconcileHealth()).toMatchObject({ ok: true, reason: null });
      expect((await instanceMetrics(db)).body).toMatch(/^toolgate_reconcile_provider_reachable 1$/m);
      await expectRefundInvariants(orders, (await externals.stats()).totalsByOrder);
    });
  }

  it("a not-found that is not the provider's own (an intermediary's 404 to the lookup) never counts as never seen", async () => {
    const { world, conversation } = await setup();
    await madeButLost(world, conversation, world.orders.o1001, 4000);
    const before = await externals.stats();
    // The probe passes, then the lookup meets a 404 from something in between.
    proxy.faults([{ mode: "pass" }, { mode: "answer", status: 404 }]);
    const report = await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    expect(report).toMatchObject({ examined: 1, stillUnknown: 1, released: 0 });
    expect((await externals.stats()).refundRequests).toBe(before.refundRequests);
    await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    await expectRefundInvariants([world.orders.o1001], (await externals.stats()).totalsByOrder);
  });
});

describe("re-sending is bounded and re-checked", () => {
  const changes: [string, (world: World) => Promise<unknown>, string][] = [
    [
      "a fraud hold",
      (world) => db.order.update({ where: { id: world.orders.o1004 }, data: { fraudHold: true } }),
      "order.fraud-hold",
    ],
    [
      "the order leaving delivered",
      (world) => db.order.update({ where: { id: world.orders.o1004 }, data: { status: "processing" } }),
      "order.not-delivered",
    ],
    [
      "the agent's refund permission revoked",
      (world) => db.user.update({ where: { id: world.users.agent }, data: { canRefund: false } }),
      "agent.not-authorized",
    ],
  ];
  for (const [name, change, code] of changes) {
    it(`after ${name}, a never-seen refund is released, not re-sent, and the call says why`, async () => {
      const { world, conversation } = await setup();
      const call = await neverSeen(world, conversation, world.orders.o1004, 3000);
      await change(world);
      const before = await externals.stats();
      expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
        examined: 1,
        released: 1,
      });
      expect((await externals.stats()).refundRequests).toBe(before.refundRequests);
      const row = await db.refund.findFirstOrThrow({ where: { toolCallId: call } });
      expect(row).toMatchObject({ status: "released", lastError: `not re-sent: ${code}`, resentAt: null });
      expect((await getToolCall(world.keys.agent, call)).json.code).toBe(code);
      expect(await db.conversation.findUniqueOrThrow({ where: { id: conversation } })).toMatchObject({
        irreversibleCents: 0,
      });
      await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
    });
  }

  it("an approved refund whose approval is no longer valid is released, not re-sent", async () => {
    const world = await createWorld({ autoLimitCents: 1000 });
    const conversation = await agentConversation(world);
    const pending = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 3000));
    expect(pending.json.code).toBe("approval.required");
    proxy.faults([{ mode: "reset" }, { mode: "reset" }, { mode: "reset" }]);
    const approved = await approveRequest(
      { userId: world.users.supervisor, tenantId: world.tenantId, role: "SUPERVISOR" },
      pending.json.approval!.id,
    );
    expect(approved).toMatchObject({ ok: true, outcome: { code: "refund.outcome-unknown" } });
    await db.approvalRequest.update({
      where: { id: pending.json.approval!.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const before = await externals.stats();
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ released: 1 });
    expect((await externals.stats()).refundRequests).toBe(before.refundRequests);
    expect((await getToolCall(world.keys.agent, pending.json.id)).json.code).toBe("approval.expired");
    await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
  });

  it("a never-seen refund a supervisor narrowed is re-checked and re-sent at the approved amount, not the proposed one", async () => {
    const world = await createWorld({ autoLimitCents: 1000, ...NO_DUPLICATE_GUARD });
    // ord_1004 is 150.00: the agent asks 90.00, another 80.00 is paid meanwhile, and the supervisor approves the 70.00
    // left. The proposal no longer fits the order; the approved amount does, and it is what was reserved.
    const { approvalId, callId } = await holdRefund(world, { amount: 9000 });
    const other = await holdRefund(world, { amount: 8000, conversation: await agentConversation(world) });
    expect(await approveRequest(supervisorOf(world), other.approvalId)).toMatchObject({ ok: true, status: "approved" });
    proxy.faults([{ mode: "reset" }, { mode: "reset" }, { mode: "reset" }]);
    const approved = await approveRequest(supervisorOf(world), approvalId, {
      edit: { tool: "issue_refund", arguments: refund(world.orders.o1004, 7000).arguments },
    });
    expect(approved).toMatchObject({ ok: true, status: "approved", outcome: { code: "refund.outcome-unknown" } });
    const before = await externals.stats();

    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
      examined: 1,
      issued: 1,
      released: 0,
    });
    expect((await externals.stats()).refundRequests).toBe(before.refundRequests + 1);
    const row = await db.refund.findFirstOrThrow({ where: { toolCallId: callId } });
    expect(row).toMatchObject({ status: "issued", amountCents: 7000 });
    expect(row.resentAt).not.toBeNull();
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      code: "refund.issued",
      result: { amount_cents: 7000, refunded_cents: 15000 },
    });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "approved",
      approvedArgs: { amount_cents: 7000 },
    });
    await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
  });

  it("past the provider's key retention nothing is re-sent: the refund goes to investigation and the order shows why it is blocked", async () => {
    const { world, conversation } = await setup();
    const call = await neverSeen(world, conversation, world.orders.o1004, 3000);
    await db.refund.updateMany({
      where: { toolCallId: call },
      data: { createdAt: new Date(Date.now() - 21 * 60 * 60_000) },
    });
    const before = await externals.stats();
    expect(
      await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId, investigateAfterMs: 48 * 60 * 60_000 }),
    ).toMatchObject({ investigate: 1 });
    expect((await externals.stats()).refundRequests).toBe(before.refundRequests);
    const row = await db.refund.findFirstOrThrow({ where: { toolCallId: call } });
    expect(row.status).toBe("investigate");
    expect(row.lastError).toMatch(/retention window has passed/);
    // Under investigation it stays that way: later passes look it up but never send it again.
    await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    expect((await externals.stats()).refundRequests).toBe(before.refundRequests);
    await expectBooksAndVisibleBlocks([world.orders.o1004], (await externals.stats()).totalsByOrder);
  });

  it("a refusal of a re-send, after attempts whose outcome was unknown, releases nothing until a lookup finds the provider's stored decline", async () => {
    const { world, conversation } = await setup();
    const call = await neverSeen(world, conversation, world.orders.o1004, 3000);
    await externals.faults([{ mode: "error_before" }]);
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
      examined: 1,
      released: 0,
      stillUnknown: 1,
    });
    expect((await db.refund.findFirstOrThrow({ where: { toolCallId: call } })).status).toBe("unknown");
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({
      examined: 1,
      released: 1,
    });
    expect((await getToolCall(world.keys.agent, call)).json.code).toBe("host.error");
    await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
  });

  it("with nothing changed, a never-seen refund within the window is re-sent once under its key and issued", async () => {
    const { world, conversation } = await setup();
    const call = await neverSeen(world, conversation, world.orders.o1004, 3000);
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ issued: 1 });
    const row = await db.refund.findFirstOrThrow({ where: { toolCallId: call } });
    expect(row.resentAt).not.toBeNull();
    expect((await externals.stats()).requestsByKey[row.providerKey]).toBe(1);
    await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
  });
});

describe("one reconciler per refund", () => {
  it("two reconcilers in this process and a third from the command line race over the same refunds: zero duplicate provider requests", async () => {
    const world = await createWorld({ sessionCapCents: 10_000_000 });
    const conversation = await agentConversation(world);
    const orders = await moreOrders(world, 12, 5000);
    for (const [index, order] of orders.entries())
      await (index % 2 ? neverSeen : madeButLost)(world, conversation, order, 1000 + index);
    const keys = (await db.refund.findMany({ where: { orderId: { in: orders } } })).map((row) => row.providerKey);
    const before = await externals.stats();

    // Every provider answer takes a while, so the reconcilers are still waiting on one refund when another looks for
    // work: only the lease keeps the others off it.
    proxy.faults(Array(120).fill({ mode: "delay", ms: 150 }));
    const cli = spawn(
      process.execPath,
      [path.join("node_modules", "tsx", "dist", "cli.mjs"), "--conditions=react-server", "scripts/reconcile.ts"],
      {
        // Its own tenant only: the test database is shared, and other files' refunds answer to other providers.
        env: { ...process.env, RECONCILE_MIN_AGE_MS: "0", RECONCILE_TENANT_ID: world.tenantId },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const exited = new Promise<number | null>((resolve) => cli.on("exit", resolve));
    await Promise.all([
      reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId }),
      reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId }),
    ]);
    expect(await exited).toBe(0);
    proxy.clearFaults();

    const after = await externals.stats();
    const delta = (field: "requestsByKey" | "lookupsByKey", key: string) =>
      (after[field][key] ?? 0) - (before[field][key] ?? 0);
    expect(keys.map((key) => delta("lookupsByKey", key))).toEqual(keys.map(() => 1));
    expect(keys.map((key) => delta("requestsByKey", key)).sort()).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
    await expectRefundInvariants(orders, after.totalsByOrder);
  }, 60_000);

  it("a refund the provider cannot answer backs off and holds no other refund up", async () => {
    const { world, conversation } = await setup();
    await madeButLost(world, conversation, world.orders.o1001, 4000);
    await madeButLost(world, conversation, world.orders.o1004, 3000);
    const ids = (await db.refund.findMany({ where: { tenantId: world.tenantId }, orderBy: { createdAt: "asc" } })).map(
      (row) => row.id,
    );
    // Each pass examines one refund and its lookup meets a gateway error: the second pass takes the other one.
    for (let pass = 0; pass < 2; pass++) {
      proxy.faults([{ mode: "pass" }, { mode: "answer", status: 502 }]);
      await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId, limit: 1, backoffMs: 60_000 });
    }
    const rows = await db.refund.findMany({ where: { id: { in: ids } } });
    expect(rows.map((row) => row.checks)).toEqual([1, 1]);
    expect(rows.every((row) => row.nextCheckAt.getTime() > Date.now() + 30_000)).toBe(true);
    // Backing off, neither is due: a pass leaves both alone.
    expect(await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId })).toMatchObject({ examined: 0 });
    await db.refund.updateMany({ where: { id: { in: ids } }, data: { nextCheckAt: new Date() } });
    await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    await expectRefundInvariants([world.orders.o1001, world.orders.o1004], (await externals.stats()).totalsByOrder);
  });
});
