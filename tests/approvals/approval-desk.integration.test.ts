import bcrypt from "bcryptjs";
import { assert, describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { denyRequest } from "@/lib/approvals/decision/deny";
import type { Approver } from "@/lib/approvals/decision/types";
import { cardFacts } from "@/lib/approvals/desk/cards";
import { expireDue } from "@/lib/approvals/expiry/expire";
import { warnExpiring } from "@/lib/approvals/expiry/warn";
import { formatQueueCursor, pendingQueue } from "@/lib/approvals/desk/queue";
import { proveWithPassword } from "@/lib/auth/step-up/step-up";
import { db } from "@/lib/db";
import { newId } from "@/lib/ids";
import { getToolCall } from "../support/api";
import { agentConversation, holdRefund, proposeAsAgent, refund, supervisorOf } from "../support/calls";
import { expectNoEffect } from "../support/effects";
import { provedFor } from "../support/step-up";
import { addPerson, createWorld, type World } from "../support/world";

async function secondSupervisor(world: World): Promise<Approver> {
  const id = await addPerson(world, `${world.users.supervisor}_2`, "SUPERVISOR", "Second");
  return { userId: id, tenantId: world.tenantId, role: "SUPERVISOR" };
}

const statusOf = async (approvalId: string) =>
  (await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).status;
/** A 10.00 refund of o1004 the agent makes in a new conversation: a possible duplicate of any request held on it. */
async function refundElsewhere(world: World) {
  const made = await proposeAsAgent(world, await agentConversation(world), refund(world.orders.o1004, 1000));
  expect(made.json.code).toBe("refund.issued");
}

const refundsOf = async (order: string) =>
  (await db.refund.findMany({ where: { orderId: order }, orderBy: { createdAt: "asc" } })).map(
    (row) => row.amountCents,
  );

describe("approve with edits, narrowing only", () => {
  it("refuses a raise, another order, another tool, another currency or reason, executing nothing and leaving the request pending", async () => {
    const world = await createWorld();
    const { approvalId } = await holdRefund(world, { amount: 8000 });
    const base = refund(world.orders.o1004, 8000).arguments;
    const edits = [
      [
        { tool: "issue_refund", arguments: { ...base, amount_cents: 8001 } },
        "an approval can only lower amount_cents (at most 8000)",
      ],
      [
        { tool: "issue_refund", arguments: { ...base, order_id: world.orders.o1001, amount_cents: 1000 } },
        "an approval cannot change order_id",
      ],
      [
        { tool: "send_status_email", arguments: { order_id: world.orders.o1004 } },
        "an approval cannot change the tool (issue_refund)",
      ],
      [{ tool: "issue_refund", arguments: { ...base, currency: "EUR" } }, "an approval cannot change currency"],
      [{ tool: "issue_refund", arguments: { ...base, reason: "late" } }, "an approval cannot change reason"],
      [
        { tool: "issue_refund", arguments: { ...base, amount_cents: 0 } },
        "an approval can only lower amount_cents (at most 8000)",
      ],
      [
        { tool: "issue_refund", arguments: { ...base, customer_id: "cu_other" } },
        "an approval cannot change customer_id",
      ],
    ] as const;
    for (const [edit, message] of edits) {
      const result = await expectNoEffect(world, () =>
        approveRequest(supervisorOf(world), approvalId, {
          edit: { tool: edit.tool, arguments: { ...edit.arguments } },
        }),
      );
      expect(result).toMatchObject({
        ok: false,
        code: "approval.edit-refused",
        message: `${message}; nothing was executed, the request is still pending`,
      });
    }
    expect(await statusOf(approvalId)).toBe("pending");
  });

  it("a lower amount is what executes; the log keeps proposed, approved and executed; the agent reads what executed", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world, { amount: 8000 });
    const edit = { tool: "issue_refund", arguments: { ...refund(world.orders.o1004, 6000).arguments } };
    const result = await approveRequest(supervisorOf(world), approvalId, { edit });
    expect(result).toMatchObject({ ok: true, status: "approved" });
    expect(await refundsOf(world.orders.o1004)).toEqual([6000]);
    expect((await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).refundedCents).toBe(6000);
    // The approved refund counts for its agent and its customer in the rules' facts, like one that ran on its own.
    expect(
      await db.refund.findMany({ where: { orderId: world.orders.o1004 }, select: { agentId: true, customerId: true } }),
    ).toEqual([{ agentId: world.users.agent, customerId: world.customers.ana }]);
    const request = await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
    expect(request.approvedArgs).toMatchObject({ amount_cents: 6000 });
    const [decision] = await db.decisionLog.findMany({
      where: { toolCallId: callId, actorId: world.users.supervisor },
    });
    expect(decision.detail).toMatchObject({
      proposed: { amount_cents: 8000 },
      approved: { amount_cents: 6000 },
      executed: { amount_cents: 6000 },
      approvers: [{ user_id: world.users.supervisor, step_up: null }],
    });
    const call = await getToolCall(world.keys.agent, callId);
    expect(call.json).toMatchObject({
      kind: "executed",
      code: "refund.issued",
      result: { amount_cents: 6000, refunded_cents: 6000 },
      decision: { approved_arguments: { amount_cents: 6000 } },
      model: {
        status: "ok",
        result: { amount_cents: 6000 },
        message: expect.stringContaining("with other arguments than you proposed (for a refund, a lower amount)"),
      },
    });
  });
});

describe("the two-person rule", () => {
  it("records the first approval as partial, refuses the same person and the requester, and executes on a second supervisor", async () => {
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { twoPersonAboveCents: 5000 } });
    const other = await secondSupervisor(world);
    const { callId, approvalId } = await holdRefund(world, { amount: 8000 });

    expect(await expectNoEffect(world, () => approveRequest(supervisorOf(world), approvalId))).toEqual({
      ok: true,
      approvalId,
      status: "partial",
    });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "pending",
      firstApproverId: world.users.supervisor,
    });
    expect((await getToolCall(world.keys.agent, callId)).json.code).toBe("approval.required");
    expect(await expectNoEffect(world, () => approveRequest(supervisorOf(world), approvalId))).toMatchObject({
      ok: false,
      code: "approval.same-approver",
    });
    const requester = { userId: world.users.agent, tenantId: world.tenantId, role: "SUPERVISOR" };
    expect(await approveRequest(requester, approvalId)).toMatchObject({ ok: false, code: "approval.self-approval" });

    expect(await approveRequest(other, approvalId)).toMatchObject({ ok: true, status: "approved" });
    expect(await refundsOf(world.orders.o1004)).toEqual([8000]);
    const decisions = await db.decisionLog.findMany({
      where: { toolCallId: callId, actorId: { not: null } },
      orderBy: { id: "asc" },
    });
    expect(decisions.map((row) => [row.code, row.actorId])).toEqual([
      ["approval.required", world.users.supervisor],
      ["refund.outcome-unknown", other.userId],
    ]);
    expect(decisions[1].detail).toMatchObject({
      approvers: [{ user_id: world.users.supervisor }, { user_id: other.userId }],
    });
  });

  it("a second approver may lower the first approver's amount further, never raise it back", async () => {
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { twoPersonAboveCents: 5000 } });
    const other = await secondSupervisor(world);
    const { approvalId } = await holdRefund(world, { amount: 9000 });
    const at = (cents: number) => ({
      edit: { tool: "issue_refund", arguments: { ...refund(world.orders.o1004, cents).arguments } },
    });
    expect(await approveRequest(supervisorOf(world), approvalId, at(8000))).toMatchObject({
      ok: true,
      status: "partial",
    });
    expect(await approveRequest(other, approvalId, at(9000))).toMatchObject({
      ok: false,
      code: "approval.edit-refused",
    });
    expect(await approveRequest(other, approvalId, at(7000))).toMatchObject({ ok: true, status: "approved" });
    expect(await refundsOf(world.orders.o1004)).toEqual([7000]);
  });

  it("concurrent approvals by the same and by different supervisors execute once and never count one person twice", async () => {
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { twoPersonAboveCents: 5000 } });
    const other = await secondSupervisor(world);
    const { approvalId } = await holdRefund(world, { amount: 8000 });
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, index) =>
        approveRequest(index % 2 === 0 ? supervisorOf(world) : other, approvalId),
      ),
    );
    expect(results.filter((result) => result.ok && result.status === "approved")).toHaveLength(1);
    expect(results.filter((result) => result.ok && result.status === "partial")).toHaveLength(1);
    expect(await refundsOf(world.orders.o1004)).toEqual([8000]);
    const request = await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } });
    expect(request.status).toBe("approved");
    expect(request.firstApproverId).not.toBeNull();
    expect(request.decidedById).not.toBe(request.firstApproverId);

    // One person alone, many times at once: one partial approval, nothing executed.
    const { approvalId: lone } = await holdRefund(world, { amount: 8000, order: world.orders.o1002 });
    const alone = await Promise.all(Array.from({ length: 12 }, () => approveRequest(supervisorOf(world), lone)));
    expect(alone.filter((result) => result.ok)).toHaveLength(1);
    expect(alone.filter((result) => !result.ok && result.code === "approval.same-approver")).toHaveLength(11);
    expect(await refundsOf(world.orders.o1002)).toEqual([]);
  });
});

describe("step-up to move money", () => {
  async function steppingSupervisor(world: World) {
    await db.user.update({
      where: { id: world.users.supervisor },
      data: { passwordHash: bcrypt.hashSync("right-password", 4) },
    });
    const person = await db.user.findUniqueOrThrow({
      where: { id: world.users.supervisor },
      select: { id: true, email: true, name: true },
    });
    const session = async () => {
      const id = newId("ses");
      await db.session.create({ data: { id, userId: person.id, tenantId: world.tenantId }, select: { id: true } });
      return id;
    };
    return { person, session };
  }

  it("above the threshold an approval consumes a proof made in this session for this request at this amount; the decision records how", async () => {
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { stepUpAboveCents: 5000 } });
    const { person, session } = await steppingSupervisor(world);
    const [mine, other] = [await session(), await session()];
    const { approvalId } = await holdRefund(world, { amount: 8000 });
    const approver = { ...supervisorOf(world), sessionId: mine };
    const purpose = (cents: number) => ({ kind: "approve" as const, items: [{ id: approvalId, cents }] });

    expect(await expectNoEffect(world, () => approveRequest(approver, approvalId))).toMatchObject({
      ok: false,
      code: "approval.step-up-required",
    });
    expect(await proveWithPassword(person, mine, purpose(8000), "wrong-password")).toEqual({ kind: "wrong" });
    // A proof for a smaller amount, or made in another session, or expired, does not count.
    const smaller = await proveWithPassword(person, mine, purpose(5001), "right-password");
    const elsewhere = await proveWithPassword(person, other, purpose(8000), "right-password");
    const expired = await proveWithPassword(person, mine, purpose(8000), "right-password");
    assert(smaller.kind === "ok" && elsewhere.kind === "ok" && expired.kind === "ok");
    await db.stepUpProof.update({ where: { id: expired.proofId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    for (const proofId of [smaller.proofId, elsewhere.proofId, expired.proofId]) {
      expect(await expectNoEffect(world, () => approveRequest(approver, approvalId, { proofId }))).toMatchObject({
        ok: false,
        code: "approval.step-up-required",
      });
    }
    expect(await statusOf(approvalId)).toBe("pending");

    const proved = await proveWithPassword(person, mine, purpose(8000), "right-password");
    assert(proved.kind === "ok");
    expect(await approveRequest(approver, approvalId, { proofId: proved.proofId })).toMatchObject({
      ok: true,
      status: "approved",
    });
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "approved",
      stepUpMethod: "password",
    });
    expect((await db.stepUpProof.findUniqueOrThrow({ where: { id: proved.proofId } })).usedFor).toEqual([
      `${approvalId}:8000`,
    ]);
    const [decision] = await db.decisionLog.findMany({
      where: {
        toolCallId: (await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).originCallId,
        actorId: person.id,
      },
    });
    expect(decision.detail).toMatchObject({ approvers: [{ user_id: person.id, step_up: "password" }] });

    // At or below the threshold no proof is asked.
    await db.tenant.update({ where: { id: world.tenantId }, data: { autoLimitCents: 1000 } });
    const { approvalId: small } = await holdRefund(world, { amount: 5000, order: world.orders.o1002 });
    expect(await approveRequest(approver, small)).toMatchObject({ ok: true, status: "approved" });
  });

  it("a second approval by the first approver is refused before its proof is used, so the proof stays good", async () => {
    const world = await createWorld();
    await db.tenant.update({
      where: { id: world.tenantId },
      data: { stepUpAboveCents: 5000, twoPersonAboveCents: 5000 },
    });
    const { person, session } = await steppingSupervisor(world);
    const mine = await session();
    const { approvalId } = await holdRefund(world, { amount: 8000 });
    const approver = { ...supervisorOf(world), sessionId: mine };
    const purpose = { kind: "approve" as const, items: [{ id: approvalId, cents: 8000 }] };
    const first = await proveWithPassword(person, mine, purpose, "right-password");
    assert(first.kind === "ok");
    expect(await approveRequest(approver, approvalId, { proofId: first.proofId })).toMatchObject({ status: "partial" });

    const again = await proveWithPassword(person, mine, purpose, "right-password");
    assert(again.kind === "ok");
    expect(
      await expectNoEffect(world, () => approveRequest(approver, approvalId, { proofId: again.proofId })),
    ).toMatchObject({ ok: false, code: "approval.same-approver" });
    expect((await db.stepUpProof.findUniqueOrThrow({ where: { id: again.proofId } })).usedFor).toEqual([]);
    expect(await statusOf(approvalId)).toBe("pending");
  });

  it("an approval stopped by its re-check uses none of its batch's proof, and the same proof approves the request again", async () => {
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { stepUpAboveCents: 5000 } });
    const retried = await holdRefund(world, { amount: 8000 });
    const failing = await holdRefund(world, { amount: 8000, order: world.orders.o1002 });
    const proof = await provedFor(world.users.supervisor, {
      kind: "approve",
      items: [
        { id: retried.approvalId, cents: 8000 },
        { id: failing.approvalId, cents: 8000 },
      ],
    });
    const approver = { ...supervisorOf(world), sessionId: proof.sessionId };
    const approve = (approvalId: string) => approveRequest(approver, approvalId, { proofId: proof.proofId });
    const usedFor = async () => (await db.stepUpProof.findUniqueOrThrow({ where: { id: proof.proofId } })).usedFor;
    // Since the requests were made: a refund of the first order from another conversation (a possible duplicate),
    // and the second order refunded down to 10.00.
    await refundElsewhere(world);
    await db.order.update({
      where: { id: world.orders.o1002 },
      data: { refundedCents: 14900, version: { increment: 1 } },
    });

    // The batch as the desk sends it: each request decided on its own, with the one proof.
    expect(await approve(retried.approvalId)).toMatchObject({ ok: false, code: "approval.retry" });
    expect(await approve(failing.approvalId)).toMatchObject({ ok: false, code: "approval.recheck-failed" });
    expect(await usedFor()).toEqual([]);
    expect(await statusOf(retried.approvalId)).toBe("pending");
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: failing.approvalId } })).toMatchObject({
      status: "failed",
      stepUpMethod: null,
    });

    expect(await approve(retried.approvalId)).toMatchObject({ ok: true, status: "approved" });
    expect(await usedFor()).toEqual([`${retried.approvalId}:8000`]);
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: retried.approvalId } })).toMatchObject({
      status: "approved",
      stepUpMethod: "password",
    });
    expect(await refundsOf(world.orders.o1004)).toEqual([1000, 8000]);
    expect(await refundsOf(world.orders.o1002)).toEqual([]);
    const logged = async (callId: string) =>
      (await db.decisionLog.findMany({ where: { toolCallId: callId }, orderBy: { id: "asc" } })).map((row) => [
        row.code,
        row.actorId,
      ]);
    expect(await logged(retried.callId)).toEqual([
      ["approval.required", null],
      ["refund.outcome-unknown", world.users.supervisor],
      ["refund.issued", null],
    ]);
    expect(await logged(failing.callId)).toEqual([
      ["approval.required", null],
      ["amount.exceeds-refundable", world.users.supervisor],
    ]);
  });

  it("the second approver's proof sent from three tabs at once: the one stopped for a retry keeps it, the one that executes uses it once", async () => {
    const world = await createWorld();
    await db.tenant.update({
      where: { id: world.tenantId },
      data: { stepUpAboveCents: 5000, twoPersonAboveCents: 5000 },
    });
    const { callId, approvalId } = await holdRefund(world, { amount: 8000 });
    const purpose = { kind: "approve" as const, items: [{ id: approvalId, cents: 8000 }] };
    const usedFor = async (proofId: string) =>
      (await db.stepUpProof.findUniqueOrThrow({ where: { id: proofId } })).usedFor;
    const first = await provedFor(world.users.supervisor, purpose);
    expect(
      await approveRequest({ ...supervisorOf(world), sessionId: first.sessionId }, approvalId, {
        proofId: first.proofId,
      }),
    ).toMatchObject({ ok: true, status: "partial" });
    expect(await usedFor(first.proofId)).toEqual([`${approvalId}:8000`]);

    const other = await secondSupervisor(world);
    const second = await provedFor(other.userId, purpose);
    // A refund of the order from another conversation since the first approval: a possible duplicate.
    await refundElsewhere(world);
    const tabs = await Promise.all(
      Array.from({ length: 3 }, () =>
        approveRequest({ ...other, sessionId: second.sessionId }, approvalId, { proofId: second.proofId }),
      ),
    );
    expect(tabs.map((tab) => (tab.ok ? tab.status : tab.code)).sort()).toEqual([
      "approval.already-decided",
      "approval.retry",
      "approved",
    ]);
    expect(await usedFor(second.proofId)).toEqual([`${approvalId}:8000`]);
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "approved",
      firstApproverId: world.users.supervisor,
      decidedById: other.userId,
    });
    expect(await refundsOf(world.orders.o1004)).toEqual([1000, 8000]);
    const decisions = await db.decisionLog.findMany({ where: { toolCallId: callId }, orderBy: { id: "asc" } });
    expect(decisions.map((row) => [row.code, row.actorId])).toEqual([
      ["approval.required", null],
      ["approval.required", world.users.supervisor],
      ["refund.outcome-unknown", other.userId],
      ["refund.issued", null],
    ]);
    expect(decisions[2].detail).toMatchObject({
      approvers: [
        { user_id: world.users.supervisor, step_up: "password" },
        { user_id: other.userId, step_up: "password" },
      ],
    });
  });

  it("a person with a passkey cannot step up with the password", async () => {
    const world = await createWorld();
    const { person, session } = await steppingSupervisor(world);
    await db.passkey.create({
      data: { id: `pk_${person.id}`, userId: person.id, publicKey: Buffer.from([1, 2, 3]), name: "key" },
    });
    expect(await proveWithPassword(person, await session(), { kind: "passkey.enrol" }, "right-password")).toEqual({
      kind: "use-passkey",
    });
    expect(await db.stepUpProof.count({ where: { userId: person.id } })).toBe(0);
  });
});

describe("denying and the queue", () => {
  it("a denial needs a reason, and the agent reads it", async () => {
    const world = await createWorld();
    const { callId, approvalId } = await holdRefund(world, { amount: 8000 });
    expect(await expectNoEffect(world, () => denyRequest(supervisorOf(world), approvalId, "  "))).toMatchObject({
      ok: false,
      code: "approval.reason-required",
    });
    expect(await statusOf(approvalId)).toBe("pending");
    expect(await denyRequest(supervisorOf(world), approvalId, "customer already refunded")).toMatchObject({
      ok: true,
      status: "denied",
    });
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      code: "approval.denied",
      reason: "customer already refunded",
    });
  });

  it("the preview says which limits the call passes, with their numbers", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    expect((await proposeAsAgent(world, conversation, refund(world.orders.o1004, 4000))).json.code).toBe(
      "refund.issued",
    );
    const held = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 7000));
    expect(held.json.approval!.preview).toMatchObject({
      held: [
        { rule: "auto_limit_cents", limit_cents: 5000, amount_cents: 7000 },
        { rule: "session_cap_cents", cap_cents: 10000, spent_cents: 4000, amount_cents: 7000 },
      ],
    });
  });

  it("filters, search and every sort page with a keyset cursor, each request once", async () => {
    const world = await createWorld();
    const amounts = [5100, 9900, 7300, 6100, 8800];
    const made = [];
    for (const amount of amounts)
      made.push({ amount, ...(await holdRefund(world, { amount: amount, order: world.orders.o1004 })) });
    for (const sort of ["oldest", "newest", "expiring", "largest"] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 5; page++) {
        const items = await pendingQueue(world.tenantId, { cursor, limit: 2, filters: { sort } });
        seen.push(...items.map((item) => item.id));
        if (items.length < 2) break;
        cursor = formatQueueCursor(items[items.length - 1], sort);
      }
      expect(new Set(seen).size, sort).toBe(5);
      if (sort === "largest")
        expect(seen).toEqual([...made].sort((a, b) => b.amount - a.amount).map((item) => item.approvalId));
    }
    const ranged = await pendingQueue(world.tenantId, { filters: { minCents: 6000, maxCents: 9000 } });
    expect(ranged.map((item) => item.impactCents).sort()).toEqual([6100, 7300, 8800]);
    expect(
      (await pendingQueue(world.tenantId, { filters: { search: made[2].callId } })).map((item) => item.id),
    ).toEqual([made[2].approvalId]);
    expect(
      (await pendingQueue(world.tenantId, { filters: { search: made[3].approvalId } })).map((item) => item.id),
    ).toEqual([made[3].approvalId]);
    expect(await pendingQueue(world.tenantId, { filters: { agentId: world.users.agent2 } })).toEqual([]);
    expect(await pendingQueue(world.tenantId, { filters: { olderThanMinutes: 60 } })).toEqual([]);
    const customer = await db.customer.findUniqueOrThrow({ where: { id: world.customers.ana } });
    expect(await pendingQueue(world.tenantId, { filters: { search: customer.email } })).toHaveLength(5);
  });
});

describe("the cards beside the queue", () => {
  it("name the oldest five other requests on the same order and count the rest up to a thousand, whatever waits on it", async () => {
    const world = await createWorld({ maxAutoWrites: 100 });
    const onOne = [];
    for (let index = 0; index < 8; index++) onOne.push(await holdRefund(world, { amount: 6000 + index }));
    const alone = await holdRefund(world, { amount: 9000, order: world.orders.o1002 });
    const items = await pendingQueue(world.tenantId, { limit: 50 });
    const facts = await cardFacts(world.tenantId, items);

    const oldest = facts[onOne[0].approvalId];
    expect(oldest.siblings.map((other) => other.id)).toEqual(onOne.slice(1, 6).map((made) => made.approvalId));
    expect(oldest.siblings.map((other) => other.impactCents)).toEqual([6001, 6002, 6003, 6004, 6005]);
    // Who asked each and when, since two on one order may read alike.
    const asked = await db.approvalRequest.findUniqueOrThrow({ where: { id: onOne[1].approvalId } });
    expect(oldest.siblings[0]).toMatchObject({ requester: "Agent", createdAt: asked.createdAt.toISOString() });
    expect(oldest.moreSiblings).toBe(2);
    const newest = facts[onOne[7].approvalId];
    expect(newest.siblings.map((other) => other.id)).toEqual(onOne.slice(0, 5).map((made) => made.approvalId));
    expect(newest.moreSiblings).toBe(2);
    expect(facts[alone.approvalId].siblings).toEqual([]);
    expect(facts[alone.approvalId].moreSiblings).toBe(0);

    await denyRequest(supervisorOf(world), onOne[1].approvalId, "duplicate");
    const after = await cardFacts(world.tenantId, await pendingQueue(world.tenantId, { limit: 50 }));
    expect(after[onOne[0].approvalId].siblings.map((other) => other.id)).toEqual(
      onOne.slice(2, 7).map((made) => made.approvalId),
    );
    expect(after[onOne[0].approvalId].moreSiblings).toBe(1);

    // Past a thousand waiting on one order the card stops counting: "over 1,000 more".
    await db.$executeRaw`
      INSERT INTO "ApprovalRequest"
      SELECT (jsonb_populate_record(NULL::"ApprovalRequest", to_jsonb(a) || jsonb_build_object(
        'id', a."id" || '_' || g, 'originCallId', a."originCallId" || '_' || g, 'argsHash', md5(a."argsHash" || g)))).*
      FROM "ApprovalRequest" a, generate_series(1, 1100) g WHERE a."id" = ${onOne[7].approvalId}`;
    const crowded = await cardFacts(world.tenantId, await pendingQueue(world.tenantId, { limit: 50 }));
    expect(crowded[onOne[0].approvalId]).toMatchObject({ moreSiblings: 1000, moreSiblingsCapped: true });
    expect(crowded[onOne[0].approvalId].siblings).toHaveLength(5);
  });
});

describe("expiry", () => {
  it("warns the tenant's admins once before a request expires; an expired request is recorded as expired, never as a person's denial", async () => {
    const world = await createWorld();
    await db.tenant.update({ where: { id: world.tenantId }, data: { expiryWarningSeconds: 600 } });
    const { callId, approvalId } = await holdRefund(world, { amount: 8000 });
    const later = await holdRefund(world, { amount: 7000 });
    await db.approvalRequest.update({
      where: { id: approvalId },
      data: { expiresAt: new Date(Date.now() + 5 * 60_000) },
    });
    const warnings = () =>
      db.outboxMessage.findMany({ where: { tenantId: world.tenantId, kind: "approval_expiring" } });

    expect(await warnExpiring(world.tenantId)).toBe(1);
    const sent = await warnings();
    const admin = await db.user.findUniqueOrThrow({ where: { id: world.users.admin } });
    expect(sent.map((message) => [message.recipient, message.subject])).toEqual([
      [admin.email, `Expiring soon: 80.00 USD refund on ${world.orders.o1004}`],
    ]);
    expect(sent[0].body).toContain(approvalId);
    expect(await warnExpiring(world.tenantId)).toBe(0);
    expect(await warnings()).toHaveLength(1);
    expect(
      (await db.approvalRequest.findUniqueOrThrow({ where: { id: later.approvalId } })).expiryNotifiedAt,
    ).toBeNull();

    await db.approvalRequest.update({ where: { id: approvalId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await expireDue(world.tenantId)).toBe(1);
    expect(await db.approvalRequest.findUniqueOrThrow({ where: { id: approvalId } })).toMatchObject({
      status: "expired",
      decidedById: null,
      resultCode: "approval.expired",
      note: null,
    });
    const log = await db.decisionLog.findMany({ where: { toolCallId: callId }, orderBy: { id: "asc" } });
    expect(log.map((row) => [row.code, row.actorId])).toEqual([
      ["approval.required", null],
      ["approval.expired", null],
    ]);
    expect((await getToolCall(world.keys.agent, callId)).json).toMatchObject({
      kind: "unavailable",
      code: "approval.expired",
    });
  });
});
