import { loadConversation } from "../../conversations/lookup";
import { db, transaction, type Tx } from "../../db";
import {
  type ConversationFacts,
  expireApproval,
  lockConversation,
  type LockedFacts,
  type TenantPolicy,
} from "../../gateway";
import { logError } from "../../observe/log";
import { countDecision } from "../../observe/metrics";
import { outcome, type Outcome } from "../../outcome";
import { updateInChat } from "../notify/chat";
import { locateRequest, lockRequest, type LockedRequest } from "./sql";
import type { Approver, DecisionFailure, DecisionResult } from "./types";

/** A pending request locked for a decision, with its conversation and the tenant's policy as they are now. */
export interface PendingDecision {
  approver: Approver;
  request: LockedRequest;
  conversation: ConversationFacts & LockedFacts;
  policy: TenantPolicy;
  /** When the decision began, for the decision log's latency. */
  startedAt: number;
  refuse: (code: DecisionFailure, message: string, failed?: Outcome) => DecisionResult;
}

/** The request as read before the locks: which call and tool it is for. */
export interface LocatedRequest {
  toolName: string;
  originCallId: string;
}

const DECISION_TRANSACTION = { statementTimeoutMs: 15_000 };

/**
 * A claim the decision is made under (an emailed link's, used once), taken first in the decision's transaction so
 * that a decision that does not happen, a refusal or a host failure alike, never leaves it taken.
 */
export interface DecisionClaim {
  /** Takes the claim; false when it is no longer there to take. */
  take(tx: Tx): Promise<boolean>;
  /** Gives it back in the same transaction when the decision is refused. */
  giveBack(tx: Tx): Promise<void>;
}

/**
 * Runs one decision on a tenant's request. In one transaction it locks the conversation, then the request (the
 * order every writer takes them in), refuses a request nobody may decide now (the requester's own, one already
 * decided, one past its expiry, which it expires) and hands the rest to `decide`. `afterCommit` sees the
 * committed result. An unexpected failure is logged and answered as host.error: nothing was executed. With a
 * `claim` that cannot be taken, nothing is decided (`approval.claim-taken`).
 */
export async function decideLocked(
  approver: Approver,
  approvalId: string,
  action: "approve" | "deny",
  decide: (tx: Tx, pending: PendingDecision) => Promise<DecisionResult>,
  afterCommit: (result: DecisionResult, located: LocatedRequest) => Promise<DecisionResult> = async (result) => result,
  claim?: DecisionClaim,
): Promise<DecisionResult> {
  const startedAt = performance.now();
  const refuse = (code: DecisionFailure, message: string, failed?: Outcome): DecisionResult => ({
    ok: false,
    approvalId,
    code,
    message,
    outcome: failed,
  });
  if (approver.role !== "SUPERVISOR") return refuse("approval.forbidden", "only supervisors decide approval requests");
  try {
    // Read without a lock only to learn the conversation; everything is re-read under the locks below.
    const located = await locateRequest(db, approvalId, approver.tenantId);
    if (!located) return refuse("approval.not-found", "no such approval request");

    const decideUnderLocks = async (tx: Tx): Promise<DecisionResult> => {
      const facts = await loadConversation(tx, located.conversationId);
      if (!facts) return refuse("approval.not-found", "the request's conversation no longer exists");
      const conversation = await lockConversation(tx, facts.conversation);
      const request = await lockRequest(tx, approvalId, approver.tenantId);
      if (!request) return refuse("approval.not-found", "no such approval request");
      if (request.requestedById === approver.userId)
        return refuse("approval.self-approval", "the requester cannot decide their own request");
      if (request.status !== "pending")
        return refuse("approval.already-decided", `this request is already ${request.status}`);
      if (request.expiresAt <= new Date()) {
        if (await expireApproval(tx, request.id)) await updateInChat(tx, request.id, { kind: "expired" });
        return refuse(
          "approval.expired",
          "this request expired before it was decided; nothing was executed",
          outcome("approval.expired"),
        );
      }
      return decide(tx, { approver, request, conversation, policy: facts.policy, startedAt, refuse });
    };
    const committed = await transaction(async (tx) => {
      if (claim && !(await claim.take(tx))) return refuse("approval.claim-taken", "the claim was already taken");
      const result = await decideUnderLocks(tx);
      if (!result.ok && claim) await claim.giveBack(tx);
      return result;
    }, DECISION_TRANSACTION);
    const final = await afterCommit(committed, located);
    if ("outcome" in final && final.outcome) countDecision(located.toolName, final.outcome);
    return final;
  } catch (error) {
    logError("approval.host-error", error, { approvalId, action });
    return refuse("host.error", "the decision could not be recorded; nothing was executed, try again");
  }
}
