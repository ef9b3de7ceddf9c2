import { describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { denyRequest } from "@/lib/approvals/decision/deny";
import { expireDue } from "@/lib/approvals/expiry/expire";
import { pendingQueue } from "@/lib/approvals/desk/queue";
import { db } from "@/lib/db";
import { getToolCall, newCallKey, propose } from "../support/api";
import { agentConversation, holdRefund, proposeAsAgent, refund, supervisorOf } from "../support/calls";
import { expectNoEffect, refundedOf } from "../support/effects";
import { createWorld } from "../support/world";

describe("approving", () => {
  it("executes exactly the held call once, and GET /tool-calls/{id} shows it executed", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world);
    const result = await approveRequest(supervisorOf(world), approvalId);
    expect(result).toMatchObject({
      ok: true,
      status: "approved",
      outcome: { kind: "executed", code: "refund.issued" },
    });
    expect(await refundedOf(world.orders.o1004)).toBe(8000);
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(1);
    const call = await getToolCall(world.keys.agent, callId);
    expect(call.json).toMatchObject({
      id: callId,
      kind: "executed",
      code: "refund.issued",
      result: { refunded_cents: 8000 },
    });
    const request = await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
    expect(request).toMatchObject({
      status: "approved",
      decidedById: world.users.supervisor,
      resultCode: "refund.issued",
    });
    const log = await db.decisionLog.findMany({ where: { toolCallId: callId }, orderBy: { id: "asc" } });
    // Approved and reserved locally (outcome unknown until the provider answers), then settled from its answer.
    expect(log.map((row) => [row.code, row.actorId])).toEqual([
      ["approval.required", null],
      ["refund.outcome-unknown", world.users.supervisor],
      ["refund.issued", null],
    ]);
    // The supervisor's decision took the time of its transaction, which the log keeps in whole milliseconds.
    expect(log[1].latencyMs).toBeGreaterThan(0);
  });

  it("is bound to the exact call: it cannot cover another amount, order, tool or conversation", async () => {
    const world = await createWorld();
    const { conversation, approvalId } = await holdRefund(world, { amount: 8000 });
    const other = await agentConversation(world);
    const ben = await agentConversation(world, "ben");
    const neighbours = [
      await proposeAsAgent(world, conversation, refund(world.orders.o1004, 9000)),
      await proposeAsAgent(world, conversation, refund(world.orders.o1004, 7999)),
      await proposeAsAgent(world, other, refund(world.orders.o1004, 8000)),
      await proposeAsAgent(world, ben, refund(world.orders.o1002, 8000)),
    ];
    for (const neighbour of neighbours) {
      expect(neighbour.json.code).toBe("approval.required");
      expect(neighbour.json.approval?.id).not.toBe(approvalId);
    }
    expect((await approveRequest(supervisorOf(world), approvalId)).ok).toBe(true);
    const refunds = await db.refund.findMany({ where: { tenantId: world.tenantId } });
    expect(refunds.map((row) => [row.orderId, row.amountCents])).toEqual([[world.orders.o1004, 8000]]);
    for (const neighbour of neighbours) {
      expect((await getToolCall(world.keys.agent, neighbour.json.id)).json.code).toBe("approval.required");
    }
    // A consumed approval covers nothing more: the same arguments again need a new one.
    const again = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 2001));
    expect(again.json.code).toBe("approval.required");
    expect(await refundedOf(world.orders.o1004)).toBe(8000);
  });

  it("refuses a request whose call no longer matches its arguments, tool or conversation, executing nothing", async () => {
    const world = await createWorld();
    const elsewhere = await agentConversation(world);
    const tamperings = [
      (call: { argsCanonical: string | null }) => ({ argsCanonical: call.argsCanonical!.replace("8000", "9000") }),
      () => ({ toolName: "send_status_email" }),
      () => ({ conversationId: elsewhere }),
    ];
    for (const tamper of tamperings) {
      const { callId, approvalId } = await holdRefund(world, { amount: 8000 });
      const call = await db.toolCall.findUniqueOrThrow({ where: { id: callId } });
      await db.toolCall.update({ where: { id: callId }, data: tamper(call) });
      const result = await expectNoEffect(world, () => approveRequest(supervisorOf(world), approvalId));
      expect(result).toMatchObject({ ok: false, code: "approval.binding-mismatch" });
      await denyRequest(supervisorOf(world), approvalId, "cleanup");
    }
  });

  it("refuses self-approval, other roles and other tenants' supervisors without effect", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world);
    await expectNoEffect(world, async () => {
      expect(
        await approveRequest({ userId: world.users.agent, tenantId: world.tenantId, role: "SUPERVISOR" }, approvalId),
      ).toMatchObject({ ok: false, code: "approval.self-approval" });
      expect(
        await approveRequest({ userId: world.users.agent, tenantId: world.tenantId, role: "AGENT" }, approvalId),
      ).toMatchObject({ ok: false, code: "approval.forbidden" });
      expect(
        await approveRequest({ userId: world.users.admin, tenantId: world.tenantId, role: "ADMIN" }, approvalId),
      ).toMatchObject({ ok: false, code: "approval.forbidden" });
      expect(
        await approveRequest(
          { userId: world.users.otherSupervisor, tenantId: world.otherTenantId, role: "SUPERVISOR" },
          approvalId,
        ),
      ).toMatchObject({ ok: false, code: "approval.not-found" });
      expect(
        await denyRequest(
          { userId: world.users.otherSupervisor, tenantId: world.otherTenantId, role: "SUPERVISOR" },
          approvalId,
          null,
        ),
      ).toMatchObject({ ok: false, code: "approval.not-found" });
    });
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
  });

  it("a forged or unknown id and an already consumed approval are refused without effect", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world);
    await expectNoEffect(world, async () => {
      expect(await approveRequest(supervisorOf(world), "apr_forged")).toMatchObject({
        ok: false,
        code: "approval.not-found",
      });
      expect(await approveRequest(supervisorOf(world), `${approvalId}x`)).toMatchObject({
        ok: false,
        code: "approval.not-found",
      });
    });
    expect((await approveRequest(supervisorOf(world), approvalId)).ok).toBe(true);
    await expectNoEffect(world, async () => {
      expect(await approveRequest(supervisorOf(world), approvalId)).toMatchObject({
        ok: false,
        code: "approval.already-decided",
      });
      expect(await denyRequest(supervisorOf(world), approvalId, null)).toMatchObject({
        ok: false,
        code: "approval.already-decided",
      });
    });
    expect(await refundedOf(world.orders.o1004)).toBe(8000);
  });

  it("an expired approval never executes, and its call becomes approval.expired", async () => {
    const world = await createWorld({ approvalTtlSeconds: 1 });
    const { callId, approvalId } = await holdRefund(world);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const result = await expectNoEffect(world, () => approveRequest(supervisorOf(world), approvalId));
    expect(result).toMatchObject({ ok: false, code: "approval.expired" });
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      kind: "unavailable",
      stage: "approval",
      code: "approval.expired",
    });
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("expired");
    expect(await approveRequest(supervisorOf(world), approvalId)).toMatchObject({
      ok: false,
      code: "approval.already-decided",
    });
  });

  it("an expired request is never shown as actionable and reads as expired; reading writes nothing, the expiry job closes it", async () => {
    const world = await createWorld({ approvalTtlSeconds: 1 });
    const { callId, approvalId } = await holdRefund(world);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await pendingQueue(world.tenantId)).toEqual([]);
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      kind: "unavailable",
      code: "approval.expired",
    });
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
    expect((await db.toolCall.findUniqueOrThrow({ where: { id: callId } })).code).toBe("approval.required");
    expect(await expireDue(world.tenantId)).toBe(1);
    expect((await db.toolCall.findUniqueOrThrow({ where: { id: callId } })).code).toBe("approval.expired");
  });

  it("a re-check failure after the order changed executes nothing and says why", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world, { amount: 8000 });
    await db.order.update({
      where: { id: world.orders.o1004 },
      data: { refundedCents: 14000, version: { increment: 1 } },
    });
    const result = await expectNoEffect(world, () => approveRequest(supervisorOf(world), approvalId));
    expect(result).toMatchObject({ ok: false, code: "approval.recheck-failed" });
    if (result.ok) throw new Error("unreachable");
    expect(result.message).toContain(
      "only 10.00 USD is refundable now, the request was for 80.00 USD; nothing was executed",
    );
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("failed");
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({ code: "amount.exceeds-refundable" });
  });

  it("a permission revoked after the request was made stops the approval", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world, { amount: 8000 });
    await db.user.update({ where: { id: world.users.agent }, data: { canRefund: false } });
    const result = await expectNoEffect(world, () => approveRequest(supervisorOf(world), approvalId));
    expect(result).toMatchObject({
      ok: false,
      code: "approval.recheck-failed",
      outcome: { code: "agent.not-authorized" },
    });
  });

  it("20 concurrent approvals of one request execute exactly once", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world, { amount: 8000 });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => approveRequest(supervisorOf(world), approvalId)),
    );
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    expect(
      results
        .filter((result) => !result.ok)
        .every((result) => !result.ok && result.code === "approval.already-decided"),
    ).toBe(true);
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(1);
    expect(await refundedOf(world.orders.o1004)).toBe(8000);
  });

  it("concurrent approve and deny resolve to one decision", async () => {
    for (let round = 0; round < 5; round++) {
      const world = await createWorld();
      const { callId, approvalId } = await holdRefund(world, { amount: 8000 });
      const results = await Promise.all([
        approveRequest(supervisorOf(world), approvalId),
        denyRequest(supervisorOf(world), approvalId, "no"),
        approveRequest(supervisorOf(world), approvalId),
        denyRequest(supervisorOf(world), approvalId, "no, twice"),
      ]);
      const winners = results.filter((result) => result.ok);
      expect(winners).toHaveLength(1);
      const request = await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
      const call = await db.toolCall.findUniqueOrThrow({ where: { id: callId } });
      const refunds = await db.refund.count({ where: { orderId: world.orders.o1004 } });
      if (request.status === "approved") expect([call.code, refunds]).toEqual(["refund.issued", 1]);
      else expect([request.status, call.code, refunds]).toEqual(["denied", "approval.denied", 0]);
    }
  });
});

describe("denying", () => {
  it("closes the request with the note, and the call becomes approval.denied", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world);
    const result = await expectNoEffect(world, () =>
      denyRequest(supervisorOf(world), approvalId, "customer already refunded by phone"),
    );
    expect(result).toMatchObject({
      ok: true,
      status: "denied",
      outcome: { kind: "denied", stage: "approval", code: "approval.denied" },
    });
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      kind: "denied",
      code: "approval.denied",
      model: {
        status: "not_allowed",
        reason: "customer already refunded by phone",
        message: expect.stringContaining("Do not propose it again"),
      },
    });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "denied",
      note: "customer already refunded by phone",
    });
  });

  it("after the decision, a retry with the same call key returns the final outcome", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const key = newCallKey();
    const first = await propose(world.keys.agent, conversation, refund(world.orders.o1004, 8000), key);
    await denyRequest(supervisorOf(world), first.json.approval!.id, "not this one");
    const retry = await expectNoEffect(world, () =>
      propose(world.keys.agent, conversation, refund(world.orders.o1004, 8000), key),
    );
    expect(retry.json).toMatchObject({ id: first.json.id, code: "approval.denied", replayed: true });
  });
});

describe("requests and their previews", () => {
  it("the preview shows what is refundable now, after earlier refunds", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    await proposeAsAgent(world, conversation, refund(world.orders.o1004, 3000));
    const pending = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
    expect(pending.json.approval!.preview.order).toMatchObject({
      total_cents: 15000,
      refunded_cents: 3000,
      refundable_cents: 12000,
      version: 3,
    });
  });

  it("proposing a call again after its request expired closes the old one and opens a new one", async () => {
    const world = await createWorld({ approvalTtlSeconds: 1 });
    const conversation = await agentConversation(world);
    const first = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
    expect(second.json.code).toBe("approval.required");
    expect(second.json.approval!.id).not.toBe(first.json.approval!.id);
    const old = await db.approvalRequest.findUniqueOrThrow({ where: { id: first.json.approval!.id } });
    expect(old).toMatchObject({ status: "expired", resultCode: "approval.expired" });
    expect(old.decidedAt).not.toBeNull();
    const oldCall = await db.toolCall.findUniqueOrThrow({ where: { id: first.json.id } });
    expect(oldCall).toMatchObject({ kind: "unavailable", stage: "approval", code: "approval.expired" });
    const log = await db.decisionLog.findMany({ where: { toolCallId: first.json.id }, orderBy: { id: "asc" } });
    expect(log.map((row) => [row.code, row.orderId])).toEqual([
      ["approval.required", world.orders.o1004],
      ["approval.expired", world.orders.o1004],
    ]);
  });

  it("a request still open is handed back, not replaced, until it expires", async () => {
    const world = await createWorld({ approvalTtlSeconds: 3600 });
    const conversation = await agentConversation(world);
    const first = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
    const second = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
    expect(second.json.approval).toEqual(first.json.approval);
    expect((await db.toolCall.findUniqueOrThrow({ where: { id: second.json.id } })).approvalId).toBe(
      first.json.approval!.id,
    );
    // Approving the request settles every call that waits on it.
    await approveRequest(supervisorOf(world), first.json.approval!.id);
    expect((await getToolCall(world.keys.agent, second.json.id)).json.code).toBe("refund.issued");
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(1);
  });
});
