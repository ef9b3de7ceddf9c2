import "server-only";
import { approvalItem, consumeStepUp, type StepUpMethod } from "../auth/step-up";
import { canonicalJson, sha256Hex } from "../canonical";
import { loadConversation } from "../conversations";
import { db, transaction, type Tx } from "../db";
import { expireApproval } from "../gateway/approval";
import { executeCall } from "../gateway/execute";
import { completeExternal } from "../gateway/pipeline";
import { lockConversation } from "../gateway/lock";
import { outcome, type Outcome } from "../gateway/outcome";
import { heldFor } from "../gateway/policy";
import { recheckForApproval } from "../gateway/recheck";
import { appendDecision, recordLaterOutcome } from "../gateway/record";
import { logError } from "../log";
import { countDecision, observeApprovalDecision } from "../metrics";
import { formatMoney } from "../money";
import { findTool } from "../tools/registry";
import type { OrderFacts, ToolDefinition } from "../tools/types";
import {
  addHeldReason,
  findDeskPolicy,
  findOriginCall,
  locateRequest,
  lockRequest,
  markDecided,
  markFirstApproval,
  type LockedRequest,
} from "./sql";
import { heldText } from "./words";

export interface Approver {
  userId: string;
  tenantId: string;
  role: string;
  /** The session deciding: a step-up proof counts only in the session that made it (none: no proof counts). */
  sessionId?: string | null;
}

export type DecisionFailure =
  | "approval.not-found"
  | "approval.forbidden"
  | "approval.self-approval"
  | "approval.already-decided"
  | "approval.expired"
  | "approval.binding-mismatch"
  | "approval.recheck-failed"
  | "approval.retry"
  | "approval.edit-refused"
  | "approval.step-up-required"
  | "approval.same-approver"
  | "approval.reason-required"
  | "host.error";

export type DecisionResult =
  | { ok: true; approvalId: string; status: "approved" | "denied"; outcome: Outcome }
  /** The first of two approvals above the two-person threshold: recorded, nothing executed yet. */
  | { ok: true; approvalId: string; status: "partial"; outcome?: undefined }
  | { ok: false; approvalId: string; code: DecisionFailure; message: string; outcome?: Outcome };

const DECISION_TRANSACTION = { statementTimeoutMs: 15_000 };

/**
 * Approves exactly one pending request: in one transaction it locks the conversation and the request, checks
 * the approver, expiry and the argument binding, re-runs context, state and policy against current data, and
 * executes conditionally on the order version while consuming the approval. Used at most once, however many
 * supervisors, clicks or instances race for it.
 */
export async function approveRequest(
  approver: Approver,
  approvalId: string,
  options: { edit?: ApprovalEdit; note?: string | null; proofId?: string | null } = {},
): Promise<DecisionResult> {
  return decide(approver, approvalId, "approve", options.note ?? null, options.edit, options.proofId ?? null);
}

/** Denies one pending request with the reason the agent will read; every call waiting on it becomes approval.denied. */
export async function denyRequest(
  approver: Approver,
  approvalId: string,
  reason: string | null,
): Promise<DecisionResult> {
  return decide(approver, approvalId, "deny", reason);
}

/** What a supervisor approves when it differs from the proposal: the same tool, with narrowed arguments. */
export interface ApprovalEdit {
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * The arguments an approval binds: the proposal (or what the first approver approved) narrowed by the edit. Only
 * the tool's narrowable numbers may change, and only downwards; order, customer, currency and tool never.
 */
export function narrowArguments(
  tool: ToolDefinition,
  base: Record<string, unknown>,
  edit: ApprovalEdit | undefined,
): { ok: true; args: Record<string, unknown> } | { ok: false; message: string } {
  if (!edit) return { ok: true, args: base };
  if (edit.tool !== tool.name) return { ok: false, message: `an approval cannot change the tool (${tool.name})` };
  const keys = new Set([...Object.keys(base), ...Object.keys(edit.arguments)]);
  for (const key of [...keys].sort()) {
    const [before, after] = [base[key], edit.arguments[key]];
    if (!(tool.narrowable ?? []).includes(key)) {
      if (canonicalJson(before) !== canonicalJson(after))
        return { ok: false, message: `an approval cannot change ${key}` };
      continue;
    }
    if (
      typeof before !== "number" ||
      typeof after !== "number" ||
      !Number.isInteger(after) ||
      after < 1 ||
      after > before
    ) {
      return { ok: false, message: `an approval can only lower ${key} (at most ${String(before)})` };
    }
  }
  const args = { ...base, ...edit.arguments };
  return tool.schema.safeParse(args).success
    ? { ok: true, args }
    : { ok: false, message: "the edited arguments are not valid for this tool" };
}

async function decide(
  approver: Approver,
  approvalId: string,
  action: "approve" | "deny",
  note: string | null = null,
  edit?: ApprovalEdit,
  proofId: string | null = null,
): Promise<DecisionResult> {
  const startedAt = performance.now();
  const fail = (code: DecisionFailure, message: string, failed?: Outcome): DecisionResult => ({
    ok: false,
    approvalId,
    code,
    message,
    outcome: failed,
  });
  if (approver.role !== "SUPERVISOR") return fail("approval.forbidden", "only supervisors decide approval requests");
  try {
    // Read without a lock only to learn the conversation; everything is re-read under the locks below.
    const located = await locateRequest(db, approvalId, approver.tenantId);
    if (!located) return fail("approval.not-found", "no such approval request");

    const result = await transaction(async (tx) => {
      const facts = await loadConversation(tx, located.conversationId);
      if (!facts) return fail("approval.not-found", "the request's conversation no longer exists");
      const conversation = await lockConversation(tx, facts.conversation);
      const request = await lockRequest(tx, approvalId, approver.tenantId);
      if (!request) return fail("approval.not-found", "no such approval request");
      if (request.requestedById === approver.userId)
        return fail("approval.self-approval", "the requester cannot decide their own request");
      if (request.status !== "pending")
        return fail("approval.already-decided", `this request is already ${request.status}`);
      if (request.expiresAt <= new Date()) {
        await expireApproval(tx, request.id);
        return fail(
          "approval.expired",
          "this request expired before it was decided; nothing was executed",
          outcome("approval.expired"),
        );
      }

      if (action === "deny") {
        // The reason as the model reads it: a note of nothing but spaces or invisible characters is no reason.
        const reason = noteForModel(note ?? "");
        if (!reason) return fail("approval.reason-required", "say why it is denied: the agent reads the reason");
        const denied = outcome("approval.denied", { reason });
        await close(tx, request, "denied", approver, denied, note, startedAt, { reason: note });
        return { ok: true as const, approvalId, status: "denied" as const, outcome: denied };
      }

      const call = await findOriginCall(tx, request.originCallId);
      const tool = findTool(request.toolName);
      const args = call?.argsCanonical ? (JSON.parse(call.argsCanonical) as Record<string, unknown>) : null;
      const bound =
        call !== null &&
        tool !== undefined &&
        args !== null &&
        call.toolName === request.toolName &&
        call.conversationId === request.conversationId &&
        call.orderId === request.orderId &&
        call.argsHash === request.argsHash &&
        sha256Hex(canonicalJson(args)) === request.argsHash &&
        tool.schema.safeParse(args).success;
      if (!bound) {
        logError("approval.binding-mismatch", new Error("approval request and its call disagree"), { approvalId });
        return fail(
          "approval.binding-mismatch",
          "the request no longer matches the call it was made for; nothing was executed",
        );
      }

      const narrowed = narrowArguments(
        tool,
        (request.firstApprovedArgs as Record<string, unknown> | null) ?? args,
        edit,
      );
      if (!narrowed.ok)
        return fail("approval.edit-refused", `${narrowed.message}; nothing was executed, the request is still pending`);
      const approved = narrowed.args;
      const impactCents = tool.impactCents(approved);
      const desk = await findDeskPolicy(tx, approver.tenantId);
      if (!desk) throw new Error(`tenant ${approver.tenantId} vanished during a decision`);
      const movesMoney = tool.effect === "irreversible" && impactCents > 0;
      // Above the threshold the approval consumes one item of a proof made in this session for this request at
      // exactly this amount (decision 014); below it no proof is asked for and none is used.
      const needsStepUp = movesMoney && impactCents > desk.stepUpAboveCents;
      const stepUp = needsStepUp
        ? await consumeStepUp(
            tx,
            { userId: approver.userId, sessionId: approver.sessionId ?? null, proofId },
            "approve",
            approvalItem(request.id, impactCents),
          )
        : null;
      if (needsStepUp && !stepUp) {
        return fail(
          "approval.step-up-required",
          `approving more than ${formatMoney(desk.stepUpAboveCents, String(args.currency ?? ""))} needs your passkey or password, confirmed for this request and amount; the request is still pending`,
        );
      }
      const twoPerson = movesMoney && impactCents > desk.twoPersonAboveCents;
      if (twoPerson && request.firstApproverId === approver.userId) {
        return fail("approval.same-approver", "you already approved this request; a second supervisor must approve it");
      }

      const recheck = await recheckForApproval(tx, tool, approved, conversation, facts.policy);
      if (!recheck.ok && recheck.outcome.kind === "unavailable") {
        return fail(
          "approval.retry",
          `${explainRecheck(recheck.outcome, recheck.order, request.impactCents)}; the request is still pending`,
        );
      }
      const detail = {
        proposed: args,
        approved,
        approvers: approversOf(request, approver.userId, stepUp),
        ...(recheck.ok && recheck.duplicate ? { duplicate_guard: recheck.duplicate } : {}),
      };
      if (!recheck.ok) {
        const explained = explainRecheck(recheck.outcome, recheck.order, impactCents);
        // The re-check's failure in words reaches the model too, except a fraud hold: that reason is internal.
        const failed =
          recheck.outcome.code === "order.fraud-hold" ? recheck.outcome : { ...recheck.outcome, reason: explained };
        await close(tx, request, "failed", approver, failed, note, startedAt, { ...detail, executed: null });
        return fail("approval.recheck-failed", explained, failed);
      }
      // A possible duplicate is what a person decides, but only one the card showed them: a match that appeared
      // since (another refund of the order issued meanwhile) is added to the card and stops this click.
      const duplicate = recheck.duplicate?.verdict === "held" ? heldFor(recheck.duplicate) : null;
      if (duplicate && !request.shownDuplicates.includes(duplicate.of_call_id)) {
        await addHeldReason(tx, request.id, duplicate);
        return fail(
          "approval.retry",
          `this is a ${heldText(duplicate, String(approved.currency ?? ""))}; nothing was executed. The request now says so: approve it again if it is not a duplicate, or deny it`,
        );
      }
      if (twoPerson && !request.firstApproverId) {
        await recordFirstApproval(tx, request, approver, approved, stepUp, startedAt, detail);
        return { ok: true as const, approvalId, status: "partial" as const };
      }
      const executed = await executeCall(tx, {
        tool,
        args: approved,
        order: recheck.order,
        conversation,
        impactCents,
        callId: call.id,
      });
      if (executed.code === "order.changed") {
        return fail(
          "approval.retry",
          "the order changed while this was being approved; nothing was executed, the request is still pending",
        );
      }
      const edited = canonicalJson(approved) !== canonicalJson(args);
      const final = edited ? { ...executed, decision: { approved_arguments: approved } } : executed;
      await close(
        tx,
        request,
        "approved",
        approver,
        final,
        note,
        startedAt,
        { ...detail, executed: approved },
        { approved, stepUp },
      );
      return { ok: true as const, approvalId, status: "approved" as const, outcome: final };
    }, DECISION_TRANSACTION);
    // As in the pipeline: the external half of an approved effect runs only after its local record commits.
    const tool = findTool(located.toolName);
    const final =
      result.ok && result.status === "approved" && tool?.external && result.outcome.code === tool.external.pendingCode
        ? {
            ...result,
            outcome: await completeExternal(tool, located.originCallId).then((completed) =>
              result.outcome.decision ? { ...completed, decision: result.outcome.decision } : completed,
            ),
          }
        : result;
    if ("outcome" in final && final.outcome) countDecision(located.toolName, final.outcome);
    return final;
  } catch (error) {
    logError("approval.host-error", error, { approvalId, action });
    return fail("host.error", "the decision could not be recorded; nothing was executed, try again");
  }
}

function approversOf(request: LockedRequest, userId: string, stepUp: StepUpMethod | null) {
  const current = { user_id: userId, step_up: stepUp };
  return request.firstApproverId
    ? [{ user_id: request.firstApproverId, step_up: request.firstStepUpMethod }, current]
    : [current];
}

/** The first of two approvals: kept on the request and in the decision log; the call stays pending. */
async function recordFirstApproval(
  tx: Tx,
  request: LockedRequest,
  approver: Approver,
  approved: Record<string, unknown>,
  stepUp: StepUpMethod | null,
  startedAt: number,
  detail: Record<string, unknown>,
): Promise<void> {
  await markFirstApproval(tx, request.id, { approverId: approver.userId, approved, stepUp });
  await appendDecision(tx, {
    tenantId: request.tenantId,
    conversationId: request.conversationId,
    toolCallId: request.originCallId,
    toolName: request.toolName,
    orderId: request.orderId,
    outcome: outcome("approval.required"),
    actorId: approver.userId,
    latencyMs: performance.now() - startedAt,
    detail: { ...detail, step: "first-approval", executed: null },
  });
}

/** Consumes the request and moves every call waiting on it to the final outcome, each with a decision-log row. */
async function close(
  tx: Tx,
  request: LockedRequest,
  status: "approved" | "denied" | "failed",
  approver: Approver,
  final: Outcome,
  note: string | null,
  startedAt: number,
  detail: Record<string, unknown>,
  approval: { approved: Record<string, unknown>; stepUp: StepUpMethod | null } | null = null,
): Promise<void> {
  const createdAt = await markDecided(tx, request.id, {
    status,
    deciderId: approver.userId,
    note,
    resultCode: final.code,
    approval,
  });
  await recordLaterOutcome(tx, {
    callId: null,
    approvalId: request.id,
    outcome: final,
    decision: { actorId: approver.userId, latencyMs: performance.now() - startedAt, detail },
  });
  observeApprovalDecision(status, createdAt);
}

export const MODEL_NOTE_MAX = 280;

/** A supervisor's deny note as the model may read it: one line of plain text, at most MODEL_NOTE_MAX characters. */
export function noteForModel(note: string): string {
  const plain = note
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  const characters = Array.from(plain);
  return characters.length <= MODEL_NOTE_MAX ? plain : `${characters.slice(0, MODEL_NOTE_MAX - 1).join("")}…`;
}

/** What the supervisor reads when a re-check stops an approval: the fact that changed, in numbers. */
export function explainRecheck(failed: Outcome, order: OrderFacts | null, requestedCents: number): string {
  switch (failed.code) {
    case "amount.exceeds-refundable": {
      if (!order) return "the amount exceeds what is refundable now; nothing was executed";
      const refundable = order.totalCents - order.refundedCents;
      const money = (cents: number) => `${formatMoney(cents, order.currency)} (${cents} cents)`;
      return `only ${money(refundable)} is refundable now, the request was for ${money(requestedCents)}; nothing was executed`;
    }
    case "order.not-delivered":
      return `the order is now ${order?.status ?? "not delivered"}; nothing was executed`;
    case "order.already-shipped":
      return `the order is now ${order?.status ?? "shipped"}; nothing was executed`;
    case "refund.in-progress":
      return "another refund on this order is still settling; nothing was executed";
    case "order.fraud-hold":
      return "the order is now on fraud hold; nothing was executed";
    case "agent.not-authorized":
      return "the requesting agent no longer has this permission; nothing was executed";
    case "order.not-found":
      return "the order is no longer reachable from this conversation; nothing was executed";
    default:
      return `re-check failed (${failed.code}); nothing was executed`;
  }
}
