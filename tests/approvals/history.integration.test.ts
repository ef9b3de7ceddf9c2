import { describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { denyRequest } from "@/lib/approvals/decision/deny";
import { expireDue } from "@/lib/approvals/expiry/expire";
import { HistoryFilterSchema } from "@/lib/approvals/desk/filters";
import { decisionHistory } from "@/lib/approvals/desk/history";
import { callTimeline } from "@/lib/calls/timeline";
import { db } from "@/lib/db";
import { agentConversation, holdRefund, proposeAsAgent, refund, supervisorOf } from "../support/calls";
import { conversationFor, newCallKey, propose } from "../support/api";
import { createWorld, type World } from "../support/world";

// The history page's and the timeline page's loaders, against real decisions made through the real routes.

async function decided(world: World) {
  const approved = await holdRefund(world, { order: world.orders.o1004, amount: 8000 });
  const denied = await holdRefund(world, { order: world.orders.o1002, amount: 9000 });
  const expired = await holdRefund(world, { order: world.orders.o1004, amount: 6000 });
  expect(await approveRequest(supervisorOf(world), approved.approvalId)).toMatchObject({
    ok: true,
    status: "approved",
  });
  expect(await denyRequest(supervisorOf(world), denied.approvalId, "already refunded")).toMatchObject({
    ok: true,
    status: "denied",
  });
  await db.approvalRequest.update({
    where: { id: expired.approvalId },
    data: { expiresAt: new Date(Date.now() - 1000) },
  });
  await expireDue(world.tenantId);
  return { approved, denied, expired };
}

const ids = (page: { items: { id: string }[] }) => page.items.map((item) => item.id);

describe("decision history", () => {
  it("lists decided and expired requests newest decision first, with decider, customer, latency's ends and the call to open", async () => {
    const world = await createWorld();
    const { approved, denied, expired } = await decided(world);
    const page = await decisionHistory(world.tenantId, {});
    expect(ids(page)).toEqual([expired.approvalId, denied.approvalId, approved.approvalId]);
    const supervisorEmail = (await db.user.findUniqueOrThrow({ where: { id: world.users.supervisor } })).email;
    expect(page.items[1]).toMatchObject({
      status: "denied",
      decidedBy: supervisorEmail,
      note: "already refunded",
      originCallId: denied.callId,
      impactCents: 9000,
      currency: "USD",
      customerEmail: expect.stringContaining("ben-"),
    });
    expect(page.items[0]).toMatchObject({ status: "expired", decidedBy: null, resultCode: "approval.expired" });
    for (const item of page.items) expect(item.decidedAt.getTime()).toBeGreaterThanOrEqual(item.createdAt.getTime());
    expect(page.next).toBeNull();
  });

  it("filters by outcome, decider, agent, dates and search, and another tenant sees none of it", async () => {
    const world = await createWorld();
    const { approved, denied, expired } = await decided(world);
    const filter = (raw: Record<string, string>) => decisionHistory(world.tenantId, HistoryFilterSchema.parse(raw));
    expect(ids(await filter({ outcome: "denied" }))).toEqual([denied.approvalId]);
    expect(ids(await filter({ decider: world.users.supervisor }))).toEqual([denied.approvalId, approved.approvalId]);
    expect(ids(await filter({ agent: world.users.agent2 }))).toEqual([]);
    expect(ids(await filter({ agent: world.users.agent }))).toHaveLength(3);
    expect(ids(await filter({ q: world.orders.o1002 }))).toEqual([denied.approvalId]);
    expect(ids(await filter({ q: approved.callId }))).toEqual([approved.approvalId]);
    expect(ids(await filter({ q: "ANA-" }))).toEqual([expired.approvalId, approved.approvalId]);
    expect(ids(await filter({ q: "%" }))).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect(ids(await filter({ from: today, to: today }))).toHaveLength(3);
    expect(ids(await filter({ to: "2020-01-01" }))).toEqual([]);
    // A bad value is dropped, not sent to the database.
    expect(HistoryFilterSchema.parse({ outcome: "pending", from: "yesterday", before: "x'; --" })).toEqual({});
    expect(ids(await decisionHistory(world.otherTenantId, {}))).toEqual([]);
  });

  it("pages by keyset: every decision exactly once, in order, across pages", async () => {
    const world = await createWorld();
    const { approved, denied, expired } = await decided(world);
    const seen: string[] = [];
    let before: string | undefined;
    for (let round = 0; round < 5; round++) {
      const page = await decisionHistory(world.tenantId, { before }, 1);
      seen.push(...ids(page));
      if (!page.next) break;
      before = page.next;
    }
    expect(seen).toEqual([expired.approvalId, denied.approvalId, approved.approvalId]);
  });
});

describe("a call's timeline", () => {
  it("shows proposed, held, approved by whom, executed and settled with the provider, only inside the tenant", async () => {
    const world = await createWorld();
    const { approved, denied } = await decided(world);
    const supervisorEmail = (await db.user.findUniqueOrThrow({ where: { id: world.users.supervisor } })).email;
    const supervisor = `Supervisor (${supervisorEmail})`;
    const timeline = await callTimeline(world.tenantId, approved.callId);
    expect(timeline?.call).toMatchObject({ id: approved.callId, kind: "executed", code: "refund.issued" });
    expect(timeline?.events.map((event) => [event.title, event.by])).toEqual([
      ["Proposed", expect.stringMatching(/^Agent \(agent-.*\)$/)],
      ["Held for a supervisor's approval", null],
      ["Approved", supervisor],
      ["Refund issued", null],
      ["Settled with the payment provider", null],
    ]);
    // Who approved is the event's own words; what the approval then did is said after, never as the person's act.
    expect(timeline?.events[2]).toMatchObject({
      code: null,
      detail: expect.stringMatching(/^Refund reserved and sent to the payment provider · Duplicate check: /),
    });
    const deniedTimeline = await callTimeline(world.tenantId, denied.callId);
    expect(deniedTimeline?.events.map((event) => [event.title, event.by, event.detail])).toEqual([
      ["Proposed", expect.stringContaining("agent-"), expect.stringContaining('"amount_cents":9000')],
      // Why it was held, as the card said it, then the duplicate-intent guard's verdict: no earlier refund matched.
      [
        "Held for a supervisor's approval",
        null,
        "Held because 90.00 USD is above the 50.00 USD limit for refunds without approval · Duplicate check: no refund of this order in the last 24 hours matches",
      ],
      ["Denied", supervisor, "Why: already refunded"],
    ]);
    expect(await callTimeline(world.otherTenantId, approved.callId)).toBeNull();
    expect(await callTimeline(world.tenantId, "call_missing")).toBeNull();
  });

  it("an automatic refund that settled shows no unknown outcome (the code is for a refund the provider has not answered); a refused or denied call says why", async () => {
    const world = await createWorld();
    const executed = await proposeAsAgent(world, await agentConversation(world), refund(world.orders.o1001, 1500));
    expect(executed.json).toMatchObject({ kind: "executed", code: "refund.issued" });
    const timeline = await callTimeline(world.tenantId, executed.json.id);
    const sent = timeline?.events.find((event) => event.title === "Refund reserved and sent to the payment provider");
    expect(sent).toMatchObject({ by: null, code: null });
    expect(timeline?.events.at(-1)?.title).toBe("Settled with the payment provider");

    // A refused call says why in words too, not only as its kind and stage.
    const refused = await proposeAsAgent(world, await agentConversation(world), refund(world.orders.o1003, 1500));
    expect(refused.json).toMatchObject({ kind: "rejected", code: "order.not-delivered" });
    expect((await callTimeline(world.tenantId, refused.json.id))?.events.map((event) => event.title)).toEqual([
      "Proposed",
      "The order is not delivered yet",
    ]);

    // A read-only agent's refund says it is outside the agent's permissions and where an admin grants them.
    const readOnly = await conversationFor(world.keys.agent2, { customer_id: world.customers.ana });
    const outside = await propose(world.keys.agent2, readOnly, refund(world.orders.o1001, 1500), newCallKey());
    expect(outside.json).toMatchObject({ kind: "denied", code: "scope.missing" });
    expect((await callTimeline(world.tenantId, outside.json.id))?.events.map((event) => event.title)).toEqual([
      "Proposed",
      "Not within this agent's permissions (an admin grants them under Policy)",
    ]);

    await db.refund.updateMany({ where: { toolCallId: executed.json.id }, data: { settledAt: null } });
    const unsettled = await callTimeline(world.tenantId, executed.json.id);
    expect(
      unsettled?.events.find((event) => event.title === "Refund reserved and sent to the payment provider"),
    ).toMatchObject({ code: "refund.outcome-unknown" });
  });
});
