import { describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { denyRequest } from "@/lib/approvals/decision/deny";
import { MODEL_NOTE_MAX } from "@/lib/approvals/words";
import { db } from "@/lib/db";
import { getToolCall, getTools, propose } from "../support/api";
import { agentConversation, callStatus, holdRefund, supervisorOf } from "../support/calls";
import { expectNoEffect } from "../support/effects";
import { createWorld } from "../support/world";

// What an agent hears about a held call: get_call_status in every conversation, and why a decision stopped it.

describe("get_call_status", () => {
  it("is exposed in every conversation, even one opened with fewer tools", async () => {
    const world = await createWorld();
    const narrow = await agentConversation(world, "ana", { tools: ["issue_refund"] });
    expect((await getTools(world.keys.agent, narrow)).json.tools.map((tool) => tool.name)).toEqual([
      "issue_refund",
      "get_call_status",
    ]);
    const { callId } = await holdRefund(world, { conversation: narrow });
    const read = await propose(world.keys.agent, narrow, callStatus(callId));
    expect(read.json).toMatchObject({ kind: "executed", code: "call.read" });
  });

  it("follows a held call from needs_approval to its executed result, reading only", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const { callId, approvalId, expiresAt } = await holdRefund(world, { conversation: conversation });
    const waiting = await expectNoEffect(world, () => propose(world.keys.agent, conversation, callStatus(callId)));
    expect(waiting.json.model).toEqual({
      status: "ok",
      result: {
        call_id: callId,
        status: "needs_approval",
        expires_at: expiresAt,
        message: expect.stringContaining(`read its outcome with get_call_status (call_id ${callId}`),
        disposition: "pending-approval",
        poll_after_seconds: 5,
      },
    });
    expect((await approveRequest(supervisorOf(world), approvalId)).ok).toBe(true);
    const decided = await propose(world.keys.agent, conversation, callStatus(callId));
    expect(decided.json.model).toEqual({
      status: "ok",
      result: {
        call_id: callId,
        status: "ok",
        result: expect.objectContaining({ amount_cents: 8000, refunded_cents: 8000 }),
        disposition: "approved-executed",
      },
    });
    const log = await db.decisionLog.findMany({ where: { toolCallId: decided.json.id } });
    expect(log.map((row) => [row.toolName, row.code])).toEqual([["get_call_status", "call.read"]]);
  });

  it("answers not_found for another conversation's call and for one that never was", async () => {
    const world = await createWorld();
    const first = await agentConversation(world);
    const second = await agentConversation(world);
    const { callId } = await holdRefund(world, { conversation: first });
    const foreign = await propose(world.keys.agent, second, callStatus(callId));
    const missing = await propose(world.keys.agent, second, callStatus("call_doesnotexist"));
    expect([foreign.json.code, missing.json.code]).toEqual(["call.not-found", "call.not-found"]);
    expect(foreign.json.model).toEqual({
      status: "not_found",
      message: expect.stringContaining("No call with this id"),
    });
    expect(missing.json.model).toEqual(foreign.json.model);
  });

  it("says a call whose request lapsed is no longer waiting", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const { callId, approvalId } = await holdRefund(world, { conversation: conversation });
    await db.approvalRequest.update({ where: { id: approvalId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const read = await propose(world.keys.agent, conversation, callStatus(callId));
    expect(read.json.model).toEqual({
      status: "ok",
      result: { call_id: callId, status: "unavailable", disposition: "expired" },
    });
  });

  it("reads a denied call as SEP-2848's denied-not-executed, with no polling hint once final", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const { callId, approvalId } = await holdRefund(world, { conversation: conversation });
    await denyRequest(supervisorOf(world), approvalId, "no");
    const read = await propose(world.keys.agent, conversation, callStatus(callId));
    expect(read.json.model).toEqual({
      status: "ok",
      result: {
        call_id: callId,
        status: "not_allowed",
        reason: "no",
        message: expect.stringContaining("A supervisor denied this call; it did not run."),
        disposition: "denied-not-executed",
      },
    });
  });
});

describe("reasons reach the agent", () => {
  it("a deny note, as one line of plain text capped in length, in the model projection of the denied call", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const { callId, approvalId } = await holdRefund(world, { conversation: conversation });
    await denyRequest(supervisorOf(world), approvalId, "Customer already got a voucher.\n\u202eSee ticket 4411.");
    const call = await getToolCall(world.keys.agent, callId);
    expect(call.json).toMatchObject({ kind: "denied", code: "approval.denied" });
    expect(call.json.model).toEqual({
      status: "not_allowed",
      reason: "Customer already got a voucher. See ticket 4411.",
      message: expect.stringContaining("with the supervisor's reason"),
    });

    const long = await holdRefund(world, { conversation: await agentConversation(world) });
    await denyRequest(supervisorOf(world), long.approvalId, "x".repeat(500));
    const capped = (await getToolCall(world.keys.agent, long.callId)).json.model.reason!;
    expect(Array.from(capped)).toHaveLength(MODEL_NOTE_MAX);
    expect(capped.endsWith("…")).toBe(true);
  });

  it("a failed re-check in words, with the numbers that changed", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const { callId, approvalId } = await holdRefund(world, { conversation: conversation });
    await db.order.update({ where: { id: world.orders.o1004 }, data: { refundedCents: 10000 } });
    const result = await approveRequest(supervisorOf(world), approvalId);
    expect(result).toMatchObject({ ok: false, code: "approval.recheck-failed" });
    const call = await getToolCall(world.keys.agent, callId);
    expect(call.json.code).toBe("amount.exceeds-refundable");
    expect(call.json.model).toEqual({
      status: "not_allowed",
      message: expect.stringContaining("Read the order with get_order"),
      reason: expect.stringContaining(
        "only 50.00 USD (5000 cents) is refundable now, the request was for 80.00 USD (8000 cents)",
      ),
    });
  });

  it("never a fraud hold, even when it is what stopped the approval", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const { callId, approvalId } = await holdRefund(world, { conversation: conversation });
    await db.order.update({ where: { id: world.orders.o1004 }, data: { fraudHold: true } });
    expect(await approveRequest(supervisorOf(world), approvalId)).toMatchObject({
      ok: false,
      code: "approval.recheck-failed",
    });
    const call = await getToolCall(world.keys.agent, callId);
    expect(call.json.code).toBe("order.fraud-hold");
    expect(call.json.model).toEqual({
      status: "not_allowed",
      message: expect.stringMatching(/^This call is not allowed/),
    });
    expect(JSON.stringify(call.json.model)).not.toMatch(/fraud/i);
  });
});
