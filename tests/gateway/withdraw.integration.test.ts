import { describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db, transaction } from "@/lib/db";
import { withdrawApproval } from "@/lib/gateway/outcome/approval";
import { lockConversation } from "@/lib/gateway/context/lock";
import { getToolCall } from "../support/api";
import { holdRefund, supervisorOf } from "../support/calls";
import { createWorld } from "../support/world";

// Withdrawing is what an MCP client's tasks/cancel does (tests/agent-api/waits/mcp-tasks.integration.test.ts drives it through the
// SDK); these cases call the gateway's function the task handler calls, the same way, without the client's waits.

const withdraw = (conversation: string, approvalId: string) =>
  transaction(async (tx) => {
    await lockConversation(tx, { id: conversation });
    return withdrawApproval(tx, approvalId, 12.4);
  });

describe("withdrawing an approval request", () => {
  it("closes a pending request as withdrawn, tells the agent, logs it without a decider and moves no money", async () => {
    const world = await createWorld();
    const { conversation, callId, approvalId } = await holdRefund(world);

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
    expect(await approveRequest(supervisorOf(world), approvalId)).toMatchObject({
      ok: false,
      code: "approval.already-decided",
    });
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(0);
  });

  it("leaves a request that expired or was decided as it is", async () => {
    const world = await createWorld();
    const expired = await holdRefund(world);
    await db.approvalRequest.update({
      where: { id: expired.approvalId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect(await withdraw(expired.conversation, expired.approvalId)).toBe(false);
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: expired.approvalId } })).toMatchObject({
      status: "pending",
      resultCode: null,
    });

    const approved = await holdRefund(world);
    expect(await approveRequest(supervisorOf(world), approved.approvalId)).toMatchObject({
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
