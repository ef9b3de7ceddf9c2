import { describe, expect, it } from "vitest";
import { revokeAgentKey } from "@/lib/admin/access/agent-keys";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { denyRequest } from "@/lib/approvals/decision/deny";
import { expireDue } from "@/lib/approvals/expiry/expire";
import { createApiKey } from "@/lib/auth/keys/api-keys";
import { db } from "@/lib/db";
import { getToolCall, propose, proposeAs, type ApiResponse } from "../../support/api";
import { holdRefund, supervisorOf } from "../../support/calls";
import { createWorld, type World } from "../../support/world";

// GET /api/v1/tool-calls/{id}?wait=N: a held call is answered as soon as a supervisor decides it, pushed by NOTIFY.
// Both it and get_call_status's wait_seconds ask for the key again when the wait ends.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("waiting for a decision", () => {
  it("answers a denial within a second of it, long before the wait is over, and leaves no watch behind", async () => {
    const world = await createWorld();
    const { conversation, callId, approvalId } = await holdRefund(world);
    const started = Date.now();
    const waiting = getToolCall(world.keys.agent, callId, "?wait=20").then((response) => ({
      response,
      at: Date.now(),
    }));
    await sleep(800);
    expect(await db.liveWatch.count({ where: { conversationId: conversation } })).toBe(1);
    await denyRequest(supervisorOf(world), approvalId, "not this one");
    const decidedAt = Date.now();
    const { response, at } = await waiting;
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      id: callId,
      kind: "denied",
      code: "approval.denied",
      model: { status: "not_allowed", reason: "not this one" },
    });
    expect(at - decidedAt).toBeLessThan(1000);
    expect(at - started).toBeLessThan(5000);
    expect(await db.liveWatch.count({ where: { conversationId: conversation } })).toBe(0);
  });

  it("waits past the provider's answer of an approved refund to its settled outcome", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world);
    const waiting = getToolCall(world.keys.agent, callId, "?wait=20").then((response) => ({
      response,
      at: Date.now(),
    }));
    await sleep(500);
    expect((await approveRequest(supervisorOf(world), approvalId)).ok).toBe(true);
    const settledAt = Date.now();
    const { response, at } = await waiting;
    expect(response.json).toMatchObject({ kind: "executed", code: "refund.issued", result: { amount_cents: 8000 } });
    expect(at - settledAt).toBeLessThan(1000);
  });

  it("answers a decided call at once, and an undecided one with its pending outcome when the wait is over", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world);
    let started = Date.now();
    const pending = await getToolCall(world.keys.agent, callId, "?wait=1");
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(pending.json).toMatchObject({ kind: "pending_approval", code: "approval.required" });
    await denyRequest(supervisorOf(world), approvalId, "not now");
    started = Date.now();
    const decided = await getToolCall(world.keys.agent, callId, "?wait=30");
    expect(Date.now() - started).toBeLessThan(1000);
    expect(decided.json.code).toBe("approval.denied");
  });

  it("answers the moment a request lapses while it is waited on, and writes nothing (the expiry job closes it)", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world);
    await db.approvalRequest.update({ where: { id: approvalId }, data: { expiresAt: new Date(Date.now() + 500) } });
    const started = Date.now();
    const response = await getToolCall(world.keys.agent, callId, "?wait=30");
    expect(Date.now() - started).toBeLessThan(3000);
    expect(response.json).toMatchObject({ kind: "unavailable", code: "approval.expired" });
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("pending");
    await expireDue(world.tenantId);
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe("expired");
  });

  it("refuses a wait that is not 0 to 60 whole seconds, and another agent's call, before waiting", async () => {
    const world = await createWorld();
    const { callId } = await holdRefund(world);
    for (const wait of ["61", "-1", "1.5", "abc", "", "100"]) {
      const response = await getToolCall(world.keys.agent, callId, `?wait=${wait}`);
      expect([response.status, response.json], wait).toEqual([
        400,
        { error: { code: "wait.invalid", message: expect.any(String) } },
      ]);
    }
    const started = Date.now();
    expect((await getToolCall(world.keys.agent2, callId, "?wait=10")).status).toBe(404);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("a key revoked while a request of it waits", () => {
  /** Another key of the world's refund-permitted agent, and its revocation by the tenant's admin. */
  async function revocableKey(world: World) {
    const { id, key } = await createApiKey(db, { id: world.users.agent, tenantId: world.tenantId });
    return { key, revoke: () => revokeAgentKey({ id: world.users.admin, tenantId: world.tenantId }, id) };
  }

  /** The answer is the route's to any revoked key, word for word, and names nothing of the call. */
  function expectRevokedAnswer(answer: ApiResponse<unknown>, unauthenticated: ApiResponse<unknown>, callId: string) {
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ error: { code: "auth.invalid-key", message: "a valid API key is required" } });
    expect([answer.status, answer.text, answer.headers.get("www-authenticate")]).toEqual([
      unauthenticated.status,
      unauthenticated.text,
      unauthenticated.headers.get("www-authenticate"),
    ]);
    expect(answer.text).not.toContain(callId);
  }

  it("GET ?wait is answered as any revoked key, with nothing of the call, though the supervisor's approval stands", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world);
    const { key, revoke } = await revocableKey(world);
    const waiting = getToolCall(key, callId, "?wait=20");
    await sleep(500);
    expect(await revoke()).toBe(true);
    expect((await approveRequest(supervisorOf(world), approvalId)).ok).toBe(true);
    expectRevokedAnswer(await waiting, await getToolCall(key, callId), callId);
    // The decision was the supervisor's, on a call proposed while the key was live: it executed.
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(1);
  });

  it("get_call_status's wait_seconds that runs out is answered as any revoked key, with nothing of the call", async () => {
    const world = await createWorld();
    const { conversation, callId } = await holdRefund(world);
    const { key, revoke } = await revocableKey(world);
    const read = { name: "get_call_status", arguments: { call_id: callId, wait_seconds: 2 } };
    const waiting = propose(key, conversation, read);
    await sleep(500);
    expect(await revoke()).toBe(true);
    expectRevokedAnswer(await waiting, await propose(key, conversation, read), callId);
  });

  it("a batch whose get_call_status waits is answered as any revoked key, and proposes none of its later calls", async () => {
    const world = await createWorld();
    const { conversation, callId, approvalId } = await holdRefund(world);
    const { key, revoke } = await revocableKey(world);
    const call = (id: string, name: string, args: unknown) => ({
      id,
      type: "function",
      function: { name, arguments: JSON.stringify(args) },
    });
    const payload = {
      role: "assistant",
      tool_calls: [
        call("call_0", "get_call_status", { call_id: callId, wait_seconds: 20 }),
        call("call_1", "get_order", { order_id: world.orders.o1004 }),
      ],
    };
    const waiting = proposeAs(key, conversation, "openai-chat", payload);
    await sleep(500);
    expect(await revoke()).toBe(true);
    await denyRequest(supervisorOf(world), approvalId, "not this one");
    const answer = await waiting;
    expectRevokedAnswer(answer, await proposeAs(key, conversation, "openai-chat", payload), callId);
    expect(answer.text).not.toContain("not this one");
    expect(await db.toolCall.count({ where: { conversationId: conversation, toolName: "get_order" } })).toBe(0);
  });
});
