import { describe, expect, it } from "vitest";
import { approveRequest, type Approver } from "@/lib/approvals/decide";
import { db, transaction } from "@/lib/db";
import { withdrawApproval } from "@/lib/gateway/approval";
import { lockConversation } from "@/lib/gateway/lock";
import { conversationFor, getToolCall, newCallKey, propose } from "./support/api";
import { createWorld, type World } from "./support/world";

// Withdrawing is what an MCP client's tasks/cancel does (tests/mcp-tasks.integration.test.ts drives it through the
// SDK); these cases call the gateway's function the task handler calls, the same way, without the client's waits.

const supervisor = (world: World): Approver => ({
  userId: world.users.supervisor,
  tenantId: world.tenantId,
  role: "SUPERVISOR",
});

async function heldRefund(world: World) {
  const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
  const response = await propose(
    world.keys.agent,
    conversation,
    {
      name: "issue_refund",
      arguments: { order_id: world.orders.o1004, amount_cents: 8000, currency: "USD", reason: "damaged" },
    },
    newCallKey(),
  );
  expect(response.json.code).toBe("approval.required");
  return { conversation, callId: response.json.id as string, approvalId: response.json.approval!.id as string };
}

const withdraw = (conversation: string, approvalId: string) =>
  transaction(async (tx) => {
    await lockConversation(tx, { id: conversation });
    return withdrawApproval(tx, approvalId, 12.4);
  });

describe("withdrawing an approval request", () => {
  it("closes a pending request as withdrawn, tells the agent, logs it without a decider and moves no money", async () => {
    const world = await createWorld();
    const { conversation, callId, approvalId } = await heldRefund(world);

    expect(await withdraw(conversation, approvalId)).toBe(true);

    const request = await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
    expect(request).toMatchObject({ status: "withdrawn", resultCode: "approval.withdrawn", decidedById: null });
    expect(request.decidedAt).not.toBeNull();
    const call = await getToolCall(world.keys.agent, callId);
    expect(call.json).toMatchObject({ id: callId, kind: "unavailable", stage: "approval", code: "approval.withdrawn" });
    const log = await db.decisionLog.findMany({ where: { toolCallId: callId }, orderBy: { id: "asc" } });
    expect(log.map((row) => [row.code, row.actorId, row.latencyMs])).toEqual([
      ["approval.required", null, expect.any(Number)],
      ["approval.withdrawn", null, 12],
    ]);
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);
    expect((await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).refundedCents).toBe(0);

    // Withdrawn is final: a second withdrawal and a supervisor's approval both find it closed.
    expect(await withdraw(conversation, approvalId)).toBe(false);
    expect(await approveRequest(supervisor(world), approvalId)).toMatchObject({
      ok: false,
      code: "approval.already-decided",
    });
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);
  });

  it("leaves a request that expired or was decided as it is", async () => {
    const world = await createWorld();
    const expired = await heldRefund(world);
    await db.approvalRequest.update({
      where: { id: expired.approvalId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect(await withdraw(expired.conversation, expired.approvalId)).toBe(false);
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: expired.approvalId } })).toMatchObject({
      status: "pending",
      resultCode: null,
    });

    const approved = await heldRefund(world);
    expect(await approveRequest(supervisor(world), approved.approvalId)).toMatchObject({
      ok: true,
      status: "approved",
    });
    expect(await withdraw(approved.conversation, approved.approvalId)).toBe(false);
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approved.approvalId } })).toMatchObject({
      status: "approved",
      resultCode: "refund.issued",
    });
    const codes = await db.decisionLog.findMany({ where: { toolCallId: approved.callId }, select: { code: true } });
    expect(codes.map((row) => row.code)).not.toContain("approval.withdrawn");
  });
});
