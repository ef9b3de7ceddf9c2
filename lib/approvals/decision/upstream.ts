import type { Tx } from "../../db";
import { approveUpstream } from "../../upstream/calls/approve";
import type { ApprovalEdit } from "./binding";
import { closeRequest } from "./close";
import type { PendingDecision } from "./lock";
import type { DecisionResult } from "./types";

/**
 * Approves a held call to an upstream server's tool: bound to its canonical arguments and the definition it was held
 * under, never edited. The request closes with the call's outcome unknown; the send follows the commit.
 */
export async function approveUpstreamRequest(
  tx: Tx,
  pending: PendingDecision,
  edit: ApprovalEdit | undefined,
): Promise<DecisionResult> {
  const { request, refuse, approver, conversation, policy } = pending;
  if (edit)
    return refuse(
      "approval.edit-refused",
      "an upstream tool's arguments cannot be edited; nothing was sent, the request is still pending",
    );
  const approved = await approveUpstream(tx, request, conversation.agent, {
    agentId: conversation.agentId,
    policy,
  });
  if (!approved.ok && approved.reason === "binding")
    return refuse(
      "approval.binding-mismatch",
      "the request no longer matches the call it was made for; nothing was sent",
    );
  if (!approved.ok) {
    await closeRequest(tx, pending, "failed", approved.outcome, null, { executed: null });
    return refuse("approval.recheck-failed", approved.message, approved.outcome);
  }
  const detail = {
    proposed: approved.args,
    approved: approved.args,
    approvers: [{ user_id: approver.userId, step_up: null }],
    definition_hash: approved.definitionHash,
    executed: approved.args,
  };
  await closeRequest(tx, pending, "approved", approved.outcome, null, detail, {
    approved: approved.args,
    stepUp: null,
  });
  return { ok: true, approvalId: request.id, status: "approved", outcome: approved.outcome };
}
