import type { StepUpMethod } from "../../auth/step-up/step-up";
import type { Tx } from "../../db";
import { recordLaterOutcome } from "../../gateway";
import { observeApprovalDecision } from "../../observe/metrics";
import type { Outcome } from "../../outcome";
import { updateInChat } from "../notify/chat";
import type { PendingDecision } from "./lock";
import { markDecided } from "./sql";

/**
 * Consumes the request and moves every call waiting on it to the final outcome, each with a decision-log row; the
 * chat notices of the request say who decided.
 */
export async function closeRequest(
  tx: Tx,
  pending: PendingDecision,
  status: "approved" | "denied" | "failed",
  final: Outcome,
  note: string | null,
  detail: Record<string, unknown>,
  approval: { approved: Record<string, unknown>; stepUp: StepUpMethod | null } | null = null,
): Promise<void> {
  const { request, approver, startedAt } = pending;
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
  await updateInChat(tx, request.id, { kind: status, byId: approver.userId });
  observeApprovalDecision(status, createdAt);
}
