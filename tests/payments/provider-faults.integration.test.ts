import { describe, expect, it, vi } from "vitest";
import { issueRefund } from "@/lib/tools/issue-refund";
import { db } from "@/lib/db";
import { reconcileRefunds } from "@/lib/payments/reconcile/reconcile";
import { getToolCall, newCallKey, propose } from "../support/api";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { ownExternals } from "../support/externals";
import { createWorld } from "../support/world";

const externals = ownExternals();

async function setup() {
  const world = await createWorld();
  const conversation = await agentConversation(world);
  return { world, conversation };
}

const orderOf = (id: string) => db.order.findUniqueOrThrow({ where: { id } });
const refundRows = (order: string) => db.refund.findMany({ where: { orderId: order } });

describe("the payment provider boundary, over real HTTP", () => {
  it("timeout after acting: unknown (never executed, never failed), then reconcile finds it issued, one provider refund", async () => {
    const { world, conversation } = await setup();
    await externals.faults([{ mode: "timeout_after" }, { mode: "timeout_after" }, { mode: "timeout_after" }]);
    const response = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 3000));
    expect(response.json).toMatchObject({
      kind: "unavailable",
      stage: "execute",
      code: "refund.outcome-unknown",
      model: { status: "pending_confirmation" },
    });
    expect((await refundRows(world.orders.o1004)).map((row) => row.status)).toEqual(["unknown"]);
    expect(await orderOf(world.orders.o1004)).toMatchObject({ refundedCents: 3000, refundPending: true });

    // While it is unknown, the order is blocked for new refunds.
    const blocked = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 100));
    expect(blocked.json.code).toBe("refund.in-progress");

    const report = await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    expect(report.issued).toBeGreaterThanOrEqual(1);
    expect((await refundRows(world.orders.o1004)).map((row) => row.status)).toEqual(["issued"]);
    expect(await orderOf(world.orders.o1004)).toMatchObject({ refundedCents: 3000, refundPending: false });
    expect((await getToolCall(world.keys.agent, response.json.id)).json).toMatchObject({
      kind: "executed",
      code: "refund.issued",
    });
    expect((await externals.stats()).totalsByOrder[world.orders.o1004]).toBe(3000);
    // A settle that learned nothing new (the timeout) is no decision: the log holds the reservation and the issue.
    const log = await db.decisionLog.findMany({ where: { toolCallId: response.json.id }, orderBy: { id: "asc" } });
    expect(log.map((row) => row.code)).toEqual(["refund.outcome-unknown", "refund.issued"]);
  });

  it("error before acting: a definite refusal releases the reservation and restores the refundable amount", async () => {
    const { world, conversation } = await setup();
    await externals.faults([{ mode: "error_before" }]);
    const response = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 3000));
    expect(response.json).toMatchObject({ kind: "unavailable", code: "host.error" });
    expect((await refundRows(world.orders.o1004)).map((row) => row.status)).toEqual(["released"]);
    expect(await orderOf(world.orders.o1004)).toMatchObject({ refundedCents: 0, refundPending: false });
    expect(await db.conversation.findUniqueOrThrow({ where: { id: conversation } })).toMatchObject({
      irreversibleCents: 0,
    });
    expect((await externals.stats()).totalsByOrder[world.orders.o1004]).toBeUndefined();
    // The whole amount is refundable again.
    const again = await proposeAsAgent(world, conversation, refund(world.orders.o1001, 4200));
    expect(again.json.code).toBe("refund.issued");
  });

  it("lost response, then the client's retry with the same key: one provider refund", async () => {
    const { world, conversation } = await setup();
    const before = await externals.stats();
    await externals.faults([{ mode: "drop_response" }]);
    const response = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 2500));
    expect(response.json).toMatchObject({ kind: "executed", code: "refund.issued" });
    const after = await externals.stats();
    expect(after.refundRequests - before.refundRequests).toBe(2);
    expect(after.refunds - before.refunds).toBe(1);
    expect(after.totalsByOrder[world.orders.o1004]).toBe(2500);
  });

  it("an error after acting is retried with the same key and settles issued once", async () => {
    const { world, conversation } = await setup();
    await externals.faults([{ mode: "error_after" }]);
    const response = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 2000));
    expect(response.json.code).toBe("refund.issued");
    expect((await externals.stats()).totalsByOrder[world.orders.o1004]).toBe(2000);
    expect((await refundRows(world.orders.o1004)).map((row) => [row.status, row.amountCents])).toEqual([
      ["issued", 2000],
    ]);
  });

  it("the provider key is derived by the host from the decision, and a replayed call never reaches the provider again", async () => {
    const { world, conversation } = await setup();
    const key = newCallKey();
    const first = await propose(world.keys.agent, conversation, refund(world.orders.o1004, 1500), key);
    const before = await externals.stats();
    const replay = await propose(world.keys.agent, conversation, refund(world.orders.o1004, 1500), key);
    expect(replay.json).toMatchObject({ id: first.json.id, replayed: true, code: "refund.issued" });
    expect((await externals.stats()).refundRequests).toBe(before.refundRequests);
    const [row] = await refundRows(world.orders.o1004);
    expect(row.providerKey).toMatch(/^rf_[0-9a-f]{40}$/);
  });

  it("operations the provider cannot confirm within the window go to the investigation list, and the order stays blocked", async () => {
    const { world, conversation } = await setup();
    await externals.faults([{ mode: "timeout_after" }, { mode: "timeout_after" }, { mode: "timeout_after" }]);
    await proposeAsAgent(world, conversation, refund(world.orders.o1004, 1000));
    const [row] = await refundRows(world.orders.o1004);
    // The provider is unreachable for the lookups too.
    const unreachable = {
      refund: async () => ({ kind: "uncertain" as const, reason: "down" }),
      lookup: async () => ({ kind: "uncertain" as const, reason: "down" }),
      probe: async () => ({ ok: true as const }),
    };
    const report = await reconcileRefunds({
      minAgeMs: 0,
      investigateAfterMs: 0,
      provider: unreachable,
      tenantId: world.tenantId,
    });
    expect(report.investigate).toBeGreaterThanOrEqual(1);
    expect((await db.refund.findUniqueOrThrow({ where: { id: row.id } })).status).toBe("investigate");
    const { refundsToInvestigate } = await import("@/lib/payments/reconcile/reconcile");
    expect((await refundsToInvestigate(world.tenantId)).map((item) => item.id)).toEqual([row.id]);
    expect((await proposeAsAgent(world, conversation, refund(world.orders.o1004, 100))).json.code).toBe(
      "refund.in-progress",
    );
    // When the provider answers again, reconciliation settles it after all.
    await reconcileRefunds({ minAgeMs: 0, investigateAfterMs: 0, tenantId: world.tenantId });
    expect((await db.refund.findUniqueOrThrow({ where: { id: row.id } })).status).toBe("issued");
  });

  it("if the external step itself blows up after the commit, the call says unknown, never failed, and reconciliation finishes it", async () => {
    const { world, conversation } = await setup();
    const broken = vi
      .spyOn(issueRefund.external!, "complete")
      .mockRejectedValueOnce(new Error("provider client misconfigured"));
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const response = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 700));
      expect(response.json).toMatchObject({ kind: "unavailable", code: "refund.outcome-unknown" });
      expect((await refundRows(world.orders.o1004)).map((row) => row.status)).toEqual(["reserved"]);
    } finally {
      broken.mockRestore();
      errors.mockRestore();
    }
    await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    expect((await refundRows(world.orders.o1004)).map((row) => row.status)).toEqual(["issued"]);
    expect((await externals.stats()).totalsByOrder[world.orders.o1004]).toBe(700);
  });
});
