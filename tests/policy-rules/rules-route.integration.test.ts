import { describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { type Approver } from "@/lib/approvals/decision/types";
import { db, transaction } from "@/lib/db";
import { conversationFor, getToolCall, newCallKey, propose } from "../support/api";
import { expectNoEffect } from "../support/effects";
import { createWorld, moreOrders, type World } from "../support/world";
import { EXAMPLE_RULES, FRAUD_WATCH, SECOND_REFUND_WAITS } from "./examples";
import { ageWorld, daysAgo, putRules, refund } from "./support";

const supervisor = (world: World): Approver => ({
  userId: world.users.supervisor,
  tenantId: world.tenantId,
  role: "SUPERVISOR",
});

async function world(rules: string | null = EXAMPLE_RULES) {
  const created = await createWorld();
  await ageWorld(created);
  if (rules) await putRules(created, rules);
  return created;
}

const anaConversation = (w: World) => conversationFor(w.keys.agent, { customer_id: w.customers.ana });

const decisionDetail = async (callId: string) =>
  (await db.decisionLog.findFirstOrThrow({ where: { toolCallId: callId }, orderBy: { id: "asc" } })).detail as any;

describe("policy rules through the route (the three example rules of issue 26)", () => {
  it("a tenant without rules is decided by the numbers, and the decision keeps the facts it was made on", async () => {
    const w = await world(null);
    const response = await propose(w.keys.agent, await anaConversation(w), refund(w.orders.o1004, 2000), newCallKey());
    expect(response.json.code).toBe("refund.issued");
    const { rules } = await decisionDetail(response.json.id);
    expect(rules).toMatchObject({
      consequence: "auto",
      live: { verdict: "allow" },
      shadow: null,
      facts: {
        tool: "issue_refund",
        agent: { id: w.users.agent, refunds_today: 0 },
        customer: { id: w.customers.ana, fraud_watch: false, age_days: 400 },
        order: { id: w.orders.o1004, total_cents: 15000, age_days: 10 },
        call: { amount_cents: 2000, conversation_writes: 0, conversation_spent_cents: 0 },
      },
    });
  });

  it("a refund on an order older than 90 days waits, with the rule's reason on the card and told to the model", async () => {
    const w = await world();
    await db.order.update({ where: { id: w.orders.o1004 }, data: { placedAt: daysAgo(120) } });
    const conversation = await anaConversation(w);
    const held = await expectNoEffect(w, () =>
      propose(w.keys.agent, conversation, refund(w.orders.o1004, 2000), newCallKey()),
    );
    expect(held.json).toMatchObject({
      code: "approval.required",
      model: { status: "needs_approval", reason: "Refunds on orders older than 90 days wait for a supervisor" },
    });
    expect(held.json.approval!.preview.held).toEqual([
      {
        rule: "policy_rule",
        id: "old-orders-wait",
        reason: "Refunds on orders older than 90 days wait for a supervisor",
      },
    ]);
    // A hold is a person's decision: approving it executes the call.
    const approved = await approveRequest(supervisor(w), held.json.approval!.id);
    expect(approved).toMatchObject({ ok: true, status: "approved" });
    expect((await db.order.findUniqueOrThrow({ where: { id: w.orders.o1004 } })).refundedCents).toBe(2000);
    // The same refund on a recent order goes through.
    const recent = await propose(w.keys.agent, conversation, refund(w.orders.o1001, 1000), newCallKey());
    expect(recent.json.code).toBe("refund.issued");
  });

  it("an agent's first refund of the day for a new customer waits; once the agent has refunded today it does not", async () => {
    const w = await world();
    await db.customer.update({ where: { id: w.customers.ana }, data: { createdAt: daysAgo(3) } });
    const ana = await anaConversation(w);
    const first = await expectNoEffect(w, () => propose(w.keys.agent, ana, refund(w.orders.o1004, 2000), newCallKey()));
    expect(first.json.code).toBe("approval.required");
    expect(first.json.approval!.preview.held).toMatchObject([{ rule: "policy_rule", id: "first-refund-new-customer" }]);
    // Ben has been a customer for long: the agent's refund to him executes, and is the agent's first today.
    const ben = await conversationFor(w.keys.agent, { customer_id: w.customers.ben });
    expect((await propose(w.keys.agent, ben, refund(w.orders.o1002, 1000), newCallKey())).json.code).toBe(
      "refund.issued",
    );
    const second = await propose(w.keys.agent, ana, refund(w.orders.o1001, 1000), newCallKey());
    expect(second.json.code).toBe("refund.issued");
    expect((await decisionDetail(second.json.id)).rules.facts.agent.refunds_today).toBe(1);
  });

  it("8 parallel refunds by one agent in 8 conversations, a rule holding the second of the day: exactly 1 runs on its own", async () => {
    const w = await world(SECOND_REFUND_WAITS);
    const orders = await moreOrders(w, 8);
    const conversations = await Promise.all(orders.map(() => anaConversation(w)));
    const responses = await Promise.all(
      orders.map((order, index) => propose(w.keys.agent, conversations[index], refund(order, 500), newCallKey())),
    );
    const codes = responses.map((response) => response.json.code).sort();
    expect(codes).toEqual(["refund.issued", ...Array(7).fill("approval.required")].sort());
    expect(await db.refund.count({ where: { tenantId: w.tenantId } })).toBe(1);
    // What is kept for replay is what the rules judged: the issued refund saw none before it, every held one saw it.
    for (const response of responses) {
      const { rules } = await decisionDetail(response.json.id);
      const issued = response.json.code === "refund.issued";
      expect(rules.facts.agent.refunds_today).toBe(issued ? 0 : 1);
      expect(rules.live.verdict).toBe(issued ? "allow" : "hold");
    }
    // The held refunds reserved nothing: the running totals are the issued refund's alone.
    const totals = await db.exposureTotal.findMany({ where: { tenantId: w.tenantId } });
    expect(totals.map((row) => Number(row.runningCents))).toEqual([500, 500]);
  });

  it("a customer put on fraud watch while a refund waits for the tenant's running total stops that refund", async () => {
    const w = await world(FRAUD_WATCH);
    const conversation = await anaConversation(w);
    expect((await propose(w.keys.agent, conversation, refund(w.orders.o1001, 1000), newCallKey())).json.code).toBe(
      "refund.issued",
    );
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    // Another instance's refund of the same tenant, between its reservation and its commit.
    const holder = transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM "ExposureTotal" WHERE "tenantId" = ${w.tenantId} AND "agentId" = '' FOR NO KEY UPDATE`;
      held();
      await released;
    });
    await holding;
    const waiting = propose(w.keys.agent, conversation, refund(w.orders.o1004, 2000), newCallKey());
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await db.customer.update({ where: { id: w.customers.ana }, data: { fraudWatch: true } });
    release();
    await holder;
    const denied = await waiting;
    expect(denied.json).toMatchObject({ kind: "denied", stage: "policy", code: "policy.rule-denied" });
    expect(await db.refund.count({ where: { orderId: w.orders.o1004 } })).toBe(0);
    expect((await decisionDetail(denied.json.id)).rules.facts.customer.fraud_watch).toBe(true);
    // Its reservation was given back: the running totals are the first refund's.
    const totals = await db.exposureTotal.findMany({ where: { tenantId: w.tenantId } });
    expect(totals.map((row) => Number(row.runningCents))).toEqual([1000, 1000]);
  });

  it("a refund to a customer on fraud watch is denied with a stable code, no effect, and the model is not told why", async () => {
    const w = await world();
    await db.customer.update({ where: { id: w.customers.ana }, data: { fraudWatch: true } });
    const conversation = await anaConversation(w);
    const denied = await expectNoEffect(w, () =>
      propose(w.keys.agent, conversation, refund(w.orders.o1004, 2000), newCallKey()),
    );
    expect(denied.json).toMatchObject({ kind: "denied", stage: "policy", code: "policy.rule-denied" });
    expect(denied.json.model).toEqual({
      status: "not_allowed",
      message: expect.stringMatching(/^This call is not allowed/),
    });
    const { rules } = await decisionDetail(denied.json.id);
    expect(rules.live).toEqual({ verdict: "deny", rules: [{ id: "fraud-watch", code: "customer-on-fraud-watch" }] });
    // Reads are not refunds: the rule names issue_refund only.
    const read = await propose(w.keys.agent, conversation, {
      name: "get_order",
      arguments: { order_id: w.orders.o1004 },
    });
    expect(read.json.code).toBe("order.read");
  });

  it("whoever approves: a customer put on fraud watch after the request stops its approval, nothing executes", async () => {
    const w = await world(FRAUD_WATCH);
    const held = await propose(w.keys.agent, await anaConversation(w), refund(w.orders.o1004, 8000), newCallKey());
    expect(held.json.code).toBe("approval.required");
    await db.customer.update({ where: { id: w.customers.ana }, data: { fraudWatch: true } });
    const result = await expectNoEffect(w, () => approveRequest(supervisor(w), held.json.approval!.id));
    expect(result).toMatchObject({ ok: false, code: "approval.recheck-failed" });
    const call = await getToolCall(w.keys.agent, held.json.id);
    expect(call.json).toMatchObject({ kind: "denied", code: "policy.rule-denied" });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: held.json.approval!.id } })).toMatchObject({
      status: "failed",
    });
  });

  it("a rule set that fails at call time fails closed: the call is not allowed, and an approval is not executed", async () => {
    const w = await world(null);
    const conversation = await anaConversation(w);
    const pending = await propose(w.keys.agent, conversation, refund(w.orders.o1004, 8000), newCallKey());
    expect(pending.json.code).toBe("approval.required");
    // Valid on the trial facts (amount 0), an overflow for any real amount: Cedar would skip the rule and allow.
    await putRules(
      w,
      '@id("overflow") @hold("x") forbid (principal, action, resource) when { context.amount_cents * 9223372036854775807 > 0 };',
    );
    const failed = await expectNoEffect(w, () =>
      propose(w.keys.agent, conversation, refund(w.orders.o1001, 1000), newCallKey()),
    );
    expect(failed.json).toMatchObject({ kind: "unavailable", stage: "policy", code: "policy.rules-failed" });
    const approval = await expectNoEffect(w, () => approveRequest(supervisor(w), pending.json.approval!.id));
    expect(approval).toMatchObject({ ok: false, code: "approval.retry" });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: pending.json.approval!.id } })).toMatchObject({
      status: "pending",
    });
  });

  it("a stored rule set the engine cannot load (a permit written past validation) fails closed", async () => {
    const w = await world("permit (principal, action, resource);");
    const conversation = await anaConversation(w);
    const failed = await expectNoEffect(w, () =>
      propose(w.keys.agent, conversation, refund(w.orders.o1004, 1000), newCallKey()),
    );
    expect(failed.json.code).toBe("policy.rules-failed");
  });
});
