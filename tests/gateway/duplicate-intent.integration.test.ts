import { describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { denyRequest } from "@/lib/approvals/decision/deny";
import { callTimeline } from "@/lib/calls/timeline";
import { db, transaction } from "@/lib/db";
import { withdrawApproval } from "@/lib/gateway/outcome/approval";
import { lockConversation } from "@/lib/gateway/context/lock";
import { reconcileRefunds } from "@/lib/payments/reconcile/reconcile";
import { newCallKey, propose } from "../support/api";
import { agentConversation, callStatus, proposeAsAgent, refund, supervisorOf } from "../support/calls";
import { ownExternals } from "../support/externals";
import { ownFaultProxy } from "../support/fault-proxy";
import { expectRefundInvariants } from "../support/invariants";
import { createWorld } from "../support/world";

// A model that insists, played as a hostile chaos test would: the provider's answer to a refund is lost, the model
// proposes the same refund while it settles, then again under a call key of its own once it settled. One refund
// reaches the provider; the second waits for a person as a possible duplicate, and whatever the person decides,
// the provider's total equals the books.

const externals = ownExternals();
const proxy = ownFaultProxy(externals);

const providerTotal = async (order: string) => (await externals.stats()).totalsByOrder[order] ?? 0;

/** The sequence up to the held duplicate: lost answer, re-proposal while settling, re-proposal after settling. */
async function insist() {
  const world = await createWorld();
  const conversation = await agentConversation(world);
  const order = world.orders.o1004;
  const firstKey = newCallKey();

  // The provider refunds 40.00, and every answer to the app is lost.
  proxy.faults([{ mode: "cut" }, { mode: "cut" }, { mode: "cut" }]);
  const first = await propose(world.keys.agent, conversation, refund(order, 4000), firstKey);
  proxy.clearFaults();
  expect(first.json).toMatchObject({ code: "refund.outcome-unknown", model: { status: "pending_confirmation" } });
  expect(await providerTotal(order)).toBe(4000);

  // Proposed again while it settles: told which call to wait on, never "unavailable".
  const whileSettling = await proposeAsAgent(world, conversation, refund(order, 4000));
  expect(whileSettling.json).toMatchObject({
    kind: "unavailable",
    stage: "state",
    code: "refund.in-progress",
    awaiting: { call_id: first.json.id, amount_cents: 4000, currency: "USD" },
    model: {
      status: "pending_confirmation",
      awaiting: { call_id: first.json.id, amount_cents: 4000, currency: "USD" },
    },
  });
  expect(whileSettling.json.model.message).toContain("get_call_status");
  expect(whileSettling.json.model.message).toContain(first.json.id);
  const waited = await propose(world.keys.agent, conversation, callStatus(first.json.id));
  expect(waited.json.result).toMatchObject({ call_id: first.json.id, status: "pending_confirmation" });

  await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
  const settled = await propose(world.keys.agent, conversation, callStatus(first.json.id));
  expect(settled.json.result).toMatchObject({ call_id: first.json.id, status: "ok" });

  // An identical retry still replays: the stored outcome, nothing new at the provider.
  const requestsBefore = (await externals.stats()).refundRequests;
  const replay = await propose(world.keys.agent, conversation, refund(order, 4000), firstKey);
  expect(replay.json).toMatchObject({ id: first.json.id, replayed: true, code: "refund.issued" });
  expect((await externals.stats()).refundRequests).toBe(requestsBefore);

  // A deliberate second write under a key of its own: held for a person as a possible duplicate of the first.
  const again = await proposeAsAgent(world, conversation, refund(order, 4000));
  expect(again.json).toMatchObject({
    kind: "pending_approval",
    code: "approval.required",
    model: { status: "needs_approval" },
  });
  expect(again.json.approval!.preview.held[0]).toMatchObject({
    rule: "possible_duplicate",
    of_call_id: first.json.id,
    amount_cents: 4000,
    status: "issued",
    window_hours: 24,
  });
  // 40.00 is within the auto limit: the guard is the only reason it waits.
  expect(again.json.approval!.preview.held).toHaveLength(1);
  expect(await providerTotal(order)).toBe(4000);
  expect(await db.order.findUniqueOrThrow({ where: { id: order } })).toMatchObject({ refundedCents: 4000 });
  await expectRefundInvariants([order], (await externals.stats()).totalsByOrder);

  // The decision log and the call's timeline show the guard's verdict.
  const [logged] = await db.decisionLog.findMany({ where: { toolCallId: again.json.id }, orderBy: { id: "asc" } });
  expect(logged).toMatchObject({
    code: "approval.required",
    detail: { duplicate_guard: { verdict: "held", of_call_id: first.json.id, amount_cents: 4000 } },
  });
  const timeline = await callTimeline(world.tenantId, again.json.id);
  const checked = timeline!.events.find((event) => event.detail?.includes("Duplicate check:"));
  expect(checked).toMatchObject({ earlierCallId: first.json.id });
  expect(checked!.detail).toContain(
    "Duplicate check: 40.00 USD was already refunded on this order within the last 24 hours",
  );
  return { world, conversation, order, first, again, approvalId: again.json.approval!.id as string };
}

describe("a model that insists cannot refund twice", () => {
  it("lost answer, re-proposal while settling, re-proposal with a fresh key: one refund, the second held; approving pays it", async () => {
    const { world, conversation, order, first, again, approvalId } = await insist();
    const approved = await approveRequest(supervisorOf(world), approvalId);
    expect(approved).toMatchObject({ ok: true, status: "approved", outcome: { code: "refund.issued" } });
    expect(await providerTotal(order)).toBe(8000);
    await expectRefundInvariants([order], (await externals.stats()).totalsByOrder);
    const read = await propose(world.keys.agent, conversation, callStatus(again.json.id));
    expect(read.json.result).toMatchObject({ call_id: again.json.id, status: "ok" });
    // The person's decision is logged with the guard's verdict they approved over.
    const decision = await db.decisionLog.findFirstOrThrow({
      where: { toolCallId: again.json.id, actorId: world.users.supervisor },
    });
    expect(decision.detail).toMatchObject({ duplicate_guard: { verdict: "held", of_call_id: first.json.id } });
  });

  it("denying the held duplicate tells the model why, and nothing more reaches the provider", async () => {
    const { world, conversation, order, again, approvalId } = await insist();
    const denied = await denyRequest(supervisorOf(world), approvalId, "Already refunded 40.00 USD for this damage.");
    expect(denied).toMatchObject({ ok: true, status: "denied" });
    const read = await propose(world.keys.agent, conversation, callStatus(again.json.id));
    expect(read.json.result).toMatchObject({
      call_id: again.json.id,
      status: "not_allowed",
      reason: "Already refunded 40.00 USD for this damage.",
    });
    expect(await providerTotal(order)).toBe(4000);
    await expectRefundInvariants([order], (await externals.stats()).totalsByOrder);
  });

  it("holds the same amount, and any amount after another conversation's refund; two different amounts one conversation made pass", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1004;
    const first = await proposeAsAgent(world, conversation, refund(order, 4000));
    expect(first.json.code).toBe("refund.issued");
    // A second, different partial refund this conversation asked for: its own refunds are no duplicate of it.
    const second = await proposeAsAgent(world, conversation, refund(order, 2500));
    expect(second.json.code).toBe("refund.issued");
    // Another conversation asking for 39.00 on the same order: the newest refund another conversation made is named.
    const other = await agentConversation(world);
    const varied = await proposeAsAgent(world, other, refund(order, 3900));
    expect(varied.json.code).toBe("approval.required");
    expect(varied.json.approval!.preview.held).toEqual([
      expect.objectContaining({ rule: "possible_duplicate", of_call_id: second.json.id, amount_cents: 2500 }),
    ]);
    const same = await proposeAsAgent(world, other, refund(order, 4000));
    expect(same.json.approval!.preview.held).toEqual([
      expect.objectContaining({ rule: "possible_duplicate", of_call_id: first.json.id, amount_cents: 4000 }),
    ]);
    // Another order is not affected.
    expect((await proposeAsAgent(world, other, refund(world.orders.o1001, 4000))).json.code).toBe("refund.issued");
    expect(await providerTotal(order)).toBe(6500);
    await expectRefundInvariants([order, world.orders.o1001], (await externals.stats()).totalsByOrder);
  });

  it("a refund older than the tenant's window is no duplicate; a longer window holds it", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const order = world.orders.o1004;
    const first = await proposeAsAgent(world, conversation, refund(order, 1000));
    expect(first.json.code).toBe("refund.issued");
    await db.refund.updateMany({
      where: { orderId: order },
      data: { createdAt: new Date(Date.now() - 25 * 3600_000) },
    });
    await db.tenant.update({ where: { id: world.tenantId }, data: { duplicateWindowHours: 48 } });
    const held = await proposeAsAgent(world, conversation, refund(order, 1000));
    expect(held.json.code).toBe("approval.required");
    await db.tenant.update({ where: { id: world.tenantId }, data: { duplicateWindowHours: 24 } });
    const later = await proposeAsAgent(world, conversation, refund(order, 1000));
    expect(later.json.code).toBe("refund.issued");
    const logged = await db.decisionLog.findMany({ where: { toolCallId: later.json.id }, orderBy: { id: "asc" } });
    // The first row is the pipeline's own, written before the provider is asked; the provider's answer follows it.
    expect((logged[0].detail as any).duplicate_guard).toEqual({ verdict: "clear", window_hours: 24 });
  });

  it("at approval, a duplicate issued after the request was made stops the click once and joins the card; the next approval pays it", async () => {
    const world = await createWorld();
    const order = world.orders.o1004;
    // Two conversations each ask for 60.00 (above the auto limit): two requests, neither a duplicate yet.
    const requests = [];
    for (let index = 0; index < 2; index++) {
      const conversation = await agentConversation(world);
      const held = await proposeAsAgent(world, conversation, refund(order, 6000));
      expect(held.json.code).toBe("approval.required");
      expect(held.json.approval!.preview.held.map((reason: any) => reason.rule)).toEqual(["auto_limit_cents"]);
      requests.push(held.json);
    }
    const [one, two] = requests;
    expect(await approveRequest(supervisorOf(world), one.approval!.id)).toMatchObject({
      ok: true,
      status: "approved",
      outcome: { code: "refund.issued" },
    });
    const stopped = await approveRequest(supervisorOf(world), two.approval!.id);
    expect(stopped).toMatchObject({ ok: false, code: "approval.retry" });
    if (stopped.ok) throw new Error("approved");
    expect(stopped.message).toContain(
      `this is a possible duplicate: 60.00 USD was already refunded on this order within the last 24 hours (earlier call ${one.id});`,
    );
    expect(await providerTotal(order)).toBe(6000);
    const request = await db.approvalRequest.findUniqueOrThrow({ where: { id: two.approval!.id } });
    expect(request.status).toBe("pending");
    expect((request.preview as any).held.map((reason: any) => [reason.rule, reason.of_call_id])).toEqual([
      ["auto_limit_cents", undefined],
      ["possible_duplicate", one.id],
    ]);
    // The card now shows it: a person approving again pays it.
    expect(await approveRequest(supervisorOf(world), two.approval!.id)).toMatchObject({
      ok: true,
      status: "approved",
      outcome: { code: "refund.issued" },
    });
    expect(await providerTotal(order)).toBe(12000);
    await expectRefundInvariants([order], (await externals.stats()).totalsByOrder);
  });
  it("a card that warns of a duplicate is decided as it stands: two held duplicates of one refund both pay when approved", async () => {
    const world = await createWorld();
    const order = world.orders.o1004;
    const ask = async () => proposeAsAgent(world, await agentConversation(world), refund(order, 1000));
    const first = await ask();
    expect(first.json.code).toBe("refund.issued");
    const twins = [await ask(), await ask()];
    for (const twin of twins)
      expect(twin.json.approval!.preview.held).toEqual([
        expect.objectContaining({ rule: "possible_duplicate", of_call_id: first.json.id }),
      ]);
    for (const twin of twins)
      expect(await approveRequest(supervisorOf(world), twin.json.approval!.id)).toMatchObject({
        ok: true,
        status: "approved",
        outcome: { code: "refund.issued" },
      });
    expect(await providerTotal(order)).toBe(3000);
    await expectRefundInvariants([order], (await externals.stats()).totalsByOrder);
  });
});

// Issue 33: the guard used to compare the order's refunds with the sum of the distinct amounts the conversation had
// proposed, refused ones included, so a proposal that moved no money made room for a second refund. Only effects
// count now: whatever else the other conversation proposed first, its 39.99 waits for a person.
describe("a proposal that moved no money makes no room for a second refund", () => {
  const cases: [
    string,
    (world: Awaited<ReturnType<typeof createWorld>>, conversation: string, order: string) => Promise<void>,
  ][] = [
    [
      "refused as more than the order has refundable (the review's sequence)",
      async (world, conversation, order) => {
        const refused = await proposeAsAgent(world, conversation, refund(order, 11001));
        expect(refused.json).toMatchObject({ kind: "rejected", code: "amount.exceeds-refundable" });
      },
    ],
    [
      "held, then withdrawn",
      async (world, conversation, order) => {
        const held = await proposeAsAgent(world, conversation, refund(order, 6000));
        expect(held.json.code).toBe("approval.required");
        const withdrawn = await transaction(async (tx) => {
          await lockConversation(tx, { id: conversation });
          return withdrawApproval(tx, held.json.approval!.id, 1);
        });
        expect(withdrawn).toBe(true);
      },
    ],
    [
      "held, then denied by a supervisor",
      async (world, conversation, order) => {
        const held = await proposeAsAgent(world, conversation, refund(order, 6000));
        expect(held.json.code).toBe("approval.required");
        expect(await denyRequest(supervisorOf(world), held.json.approval!.id, "Not this one.")).toMatchObject({
          ok: true,
        });
      },
    ],
    [
      "a held twin of the first refund, still waiting",
      async (world, conversation, order) => {
        const twin = await proposeAsAgent(world, conversation, refund(order, 4000));
        expect(twin.json.approval!.preview.held).toEqual([
          expect.objectContaining({ rule: "possible_duplicate", amount_cents: 4000 }),
        ]);
      },
    ],
  ];

  it.each(cases)("%s", async (_name, before) => {
    const world = await createWorld();
    const order = world.orders.o1004;
    const first = await proposeAsAgent(world, await agentConversation(world), refund(order, 4000));
    expect(first.json.code).toBe("refund.issued");

    const other = await agentConversation(world);
    await before(world, other, order);
    const varied = await proposeAsAgent(world, other, refund(order, 3999));
    expect(varied.json).toMatchObject({ kind: "pending_approval", code: "approval.required" });
    expect(varied.json.approval!.preview.held).toEqual([
      expect.objectContaining({ rule: "possible_duplicate", of_call_id: first.json.id, amount_cents: 4000 }),
    ]);

    // One refund at the provider, and the books say the same.
    expect(await providerTotal(order)).toBe(4000);
    expect(await db.refund.count({ where: { orderId: order, status: "issued" } })).toBe(1);
    expect(await db.order.findUniqueOrThrow({ where: { id: order } })).toMatchObject({ refundedCents: 4000 });
    await expectRefundInvariants([order], (await externals.stats()).totalsByOrder);
  });
});
