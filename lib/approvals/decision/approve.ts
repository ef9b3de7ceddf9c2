import {
  approvalItem,
  consumeStepUp,
  returnStepUp,
  type StepUpHolder,
  type StepUpMethod,
} from "../../auth/step-up/step-up";
import { canonicalJson } from "../../canonical";
import type { Tx } from "../../db";
import { appendDecision, completeExternal, executeCall, heldFor, recheckForApproval } from "../../gateway";
import { logError } from "../../observe/log";
import { formatMoney } from "../../money";
import { outcome } from "../../outcome";
import { paymentPort } from "../../payments/port";
import { findTool } from "../../tools/registry";
import { sendApproved } from "../../upstream/calls/approve";
import { isUpstreamName } from "../../upstream/calls/exposure";
import type { ToolPorts } from "../../tools/types";
import { updateInChat } from "../notify/chat";
import { findDeskPolicy } from "../sql";
import { heldText } from "../words";
import { checkBinding, narrowArguments, type ApprovalEdit, type Binding } from "./binding";
import { closeRequest } from "./close";
import { explainRecheck } from "./explain";
import { decideLocked, type DecisionClaim, type LocatedRequest, type PendingDecision } from "./lock";
import { addHeldReason, markFirstApproval, type LockedRequest } from "./sql";
import { approveUpstreamRequest } from "./upstream";
import type { Approver, DecisionResult } from "./types";

const TOOL_PORTS: ToolPorts = { payments: paymentPort };

/**
 * Approves exactly one pending request: in one transaction it locks the conversation and the request, checks
 * the approver, expiry and the argument binding, re-runs context, state and policy against current data, and
 * executes conditionally on the order version while consuming the approval. Used at most once, however many
 * supervisors, clicks or instances race for it.
 */
export async function approveRequest(
  approver: Approver,
  approvalId: string,
  options: { edit?: ApprovalEdit; proofId?: string | null; claim?: DecisionClaim } = {},
): Promise<DecisionResult> {
  return decideLocked(
    approver,
    approvalId,
    "approve",
    (tx, pending) => approve(tx, pending, options.edit, options.proofId ?? null),
    completeExternalAfterCommit,
    options.claim,
  );
}

async function approve(
  tx: Tx,
  pending: PendingDecision,
  edit: ApprovalEdit | undefined,
  proofId: string | null,
): Promise<DecisionResult> {
  const { approver, request, refuse } = pending;
  if (isUpstreamName(request.toolName)) return approveUpstreamRequest(tx, pending, edit);
  const binding = await checkBinding(tx, request);
  if (!binding) {
    logError("approval.binding-mismatch", new Error("approval request and its call disagree"), {
      approvalId: request.id,
    });
    return refuse(
      "approval.binding-mismatch",
      "the request no longer matches the call it was made for; nothing was executed",
    );
  }
  const base = (request.firstApprovedArgs as Record<string, unknown> | null) ?? binding.args;
  const narrowed = narrowArguments(binding.tool, base, edit);
  if (!narrowed.ok)
    return refuse("approval.edit-refused", `${narrowed.message}; nothing was executed, the request is still pending`);
  const holder = { userId: approver.userId, sessionId: approver.sessionId ?? null, proofId };
  const proof = await proveApprover(tx, pending, binding, narrowed.args, holder);
  if (!proof.proved) return proof.refusal;
  const result = await carryOut(tx, pending, binding, narrowed.args, proof);
  // A proof is used by the approval taking effect: one that stops (its re-check, a duplicate, a changed order) leaves
  // the proof as it was, good for the retry.
  if (!result.ok && proof.stepUp) await returnStepUp(tx, holder, approvalItem(request.id, proof.impactCents));
  return result;
}

type Proof =
  | { proved: true; impactCents: number; stepUp: StepUpMethod | null; twoPerson: boolean }
  | { proved: false; refusal: DecisionResult };

/**
 * Whether this supervisor may approve this amount now. Above the step-up threshold the approval consumes one item
 * of a proof made in this session for this request at exactly this amount (decision 014), given back if the
 * approval then stops short; below it no proof is asked for and none is used. Above the two-person threshold the
 * second approval must be another supervisor's.
 */
async function proveApprover(
  tx: Tx,
  pending: PendingDecision,
  binding: Binding,
  approved: Record<string, unknown>,
  holder: StepUpHolder,
): Promise<Proof> {
  const { approver, request, refuse } = pending;
  const { tool, args } = binding;
  const impactCents = tool.impactCents(approved);
  const desk = await findDeskPolicy(tx, approver.tenantId);
  if (!desk) throw new Error(`tenant ${approver.tenantId} vanished during a decision`);
  const movesMoney = tool.effect === "irreversible" && impactCents > 0;
  const needsStepUp = movesMoney && impactCents > desk.stepUpAboveCents;
  // Before any proof is used: a refusal that no proof could lift leaves the approver's proof good for later.
  const twoPerson = movesMoney && impactCents > desk.twoPersonAboveCents;
  if (twoPerson && request.firstApproverId === approver.userId) {
    return {
      proved: false,
      refusal: refuse(
        "approval.same-approver",
        "you already approved this request; a second supervisor must approve it",
      ),
    };
  }
  const stepUp = needsStepUp ? await consumeStepUp(tx, holder, "approve", approvalItem(request.id, impactCents)) : null;
  if (needsStepUp && !stepUp) {
    return {
      proved: false,
      refusal: refuse(
        "approval.step-up-required",
        `approving more than ${formatMoney(desk.stepUpAboveCents, String(args.currency ?? ""))} needs your passkey or password, confirmed for this request and amount; the request is still pending`,
      ),
    };
  }
  return { proved: true, impactCents, stepUp, twoPerson };
}

/**
 * Re-runs context, state and policy against current data, then records the first of two approvals, or executes
 * the call conditionally on the order version and closes the request.
 */
async function carryOut(
  tx: Tx,
  pending: PendingDecision,
  binding: Binding,
  approved: Record<string, unknown>,
  proof: Extract<Proof, { proved: true }>,
): Promise<DecisionResult> {
  const { approver, request, conversation, policy, refuse } = pending;
  const { call, tool, args } = binding;
  const { impactCents, stepUp, twoPerson } = proof;
  const recheck = await recheckForApproval(tx, tool, approved, conversation, policy, TOOL_PORTS);
  if (!recheck.ok && recheck.outcome.kind === "unavailable") {
    return refuse(
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
    // The re-check's failure in words reaches the model too, except a fraud hold: that reason is internal.
    const failed =
      recheck.outcome.code === "order.fraud-hold"
        ? recheck.outcome
        : { ...recheck.outcome, reason: explainRecheck(recheck.outcome, recheck.order, impactCents, true) };
    await closeRequest(tx, pending, "failed", failed, null, { ...detail, executed: null });
    return refuse("approval.recheck-failed", explainRecheck(recheck.outcome, recheck.order, impactCents), failed);
  }
  // A possible duplicate is what a person decides, once the card has told them it is one: a request held for
  // other reasons that now matches a refund of the order (one issued since it was opened) gets the match added
  // to its card, and this click stops. A card that already warns of a duplicate is decided as it stands.
  const duplicate = recheck.duplicate?.verdict === "held" ? heldFor(recheck.duplicate) : null;
  if (duplicate && request.shownDuplicates.length === 0) {
    await addHeldReason(tx, request.id, duplicate);
    return refuse(
      "approval.retry",
      `this is a ${heldText(duplicate, String(approved.currency ?? ""))}; nothing was executed. The request now says so: approve it again if it is not a duplicate, or deny it`,
    );
  }
  if (twoPerson && !request.firstApproverId) {
    await recordFirstApproval(tx, pending, approved, stepUp, detail);
    return { ok: true, approvalId: request.id, status: "partial" };
  }
  const executed = await executeCall(
    tx,
    { tool, args: approved, order: recheck.order, conversation, impactCents, callId: call.id },
    TOOL_PORTS,
  );
  if (executed.code === "order.changed") {
    return refuse(
      "approval.retry",
      "the order changed while this was being approved; nothing was executed, the request is still pending",
    );
  }
  const edited = canonicalJson(approved) !== canonicalJson(args);
  const final = edited ? { ...executed, decision: { approved_arguments: approved } } : executed;
  await closeRequest(tx, pending, "approved", final, null, { ...detail, executed: approved }, { approved, stepUp });
  return { ok: true, approvalId: request.id, status: "approved", outcome: final };
}

function approversOf(request: LockedRequest, userId: string, stepUp: StepUpMethod | null) {
  const current = { user_id: userId, step_up: stepUp };
  return request.firstApproverId
    ? [{ user_id: request.firstApproverId, step_up: request.firstStepUpMethod }, current]
    : [current];
}

/**
 * The first of two approvals: kept on the request and in the decision log, and its chat notices say it waits for a
 * second supervisor; the call stays pending.
 */
async function recordFirstApproval(
  tx: Tx,
  pending: PendingDecision,
  approved: Record<string, unknown>,
  stepUp: StepUpMethod | null,
  detail: Record<string, unknown>,
): Promise<void> {
  const { approver, request, startedAt } = pending;
  await markFirstApproval(tx, request.id, { approverId: approver.userId, approved, stepUp });
  await updateInChat(tx, request.id, { kind: "escalated", byId: approver.userId });
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

/** As in the pipeline: the external half of an approved effect runs only after its local record commits. */
async function completeExternalAfterCommit(result: DecisionResult, located: LocatedRequest): Promise<DecisionResult> {
  if (result.ok && result.status === "approved" && result.outcome.code === "upstream.outcome-unknown")
    return { ...result, outcome: await sendApproved(located.originCallId) };
  const tool = findTool(located.toolName);
  if (
    result.ok &&
    result.status === "approved" &&
    tool?.external &&
    result.outcome.code === tool.external.pendingCode
  ) {
    const completed = await completeExternal(tool, located.originCallId, TOOL_PORTS);
    return {
      ...result,
      outcome: result.outcome.decision ? { ...completed, decision: result.outcome.decision } : completed,
    };
  }
  return result;
}
