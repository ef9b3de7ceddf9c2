import type { Db } from "../../db";
import type { Prisma } from "../../generated/prisma/client";
import { outcome, type Outcome } from "../../outcome";
import { insertCall, insertDecision, updateLaterOutcome, updateLaterOutcomeWith } from "./sql";
import type { CallRecord, DecisionRow, LaterOutcome } from "../types";

/** A latency as the log stores it: whole milliseconds, never negative. */
export const wholeMs = (ms: number) => Math.max(0, Math.round(ms));

/**
 * A call's row before its outcome is known: a host error until the sequence decides, no call key, no order, no
 * approval, as a failure anywhere after this point records it.
 */
export function newCallRecord(call: {
  id: string;
  conversation: { id: string; tenantId: string };
  toolName: string;
  argsCanonical: string;
  argsHash: string;
}): CallRecord {
  return {
    id: call.id,
    tenantId: call.conversation.tenantId,
    conversationId: call.conversation.id,
    toolName: call.toolName,
    callKey: null,
    argsCanonical: call.argsCanonical,
    argsHash: call.argsHash,
    orderId: null,
    approvalId: null,
    outcome: outcome("host.error"),
    latencyMs: 0,
  };
}

/**
 * Stage 13, and the only writer of the decision log: names, ids and codes, never model text; only a supervisor's
 * decision adds `detail` (the arguments proposed, approved and executed, and who approved how).
 */
export async function appendDecision(client: Db, row: DecisionRow): Promise<void> {
  await insertDecision(client, { ...row, latencyMs: wholeMs(row.latencyMs) });
}

/** The call's own row, its decision-log row and the live-view notice (if watched), in one statement. */
export async function recordCall(client: Db, call: CallRecord): Promise<void> {
  await insertCall(client, { ...call, latencyMs: wholeMs(call.latencyMs) });
}

/**
 * An outcome decided after the fact (a supervisor's decision, an expiry, the payment provider's answer) for
 * a call and for every call that waits on the same approval request: their rows, an approved request's result,
 * one decision-log row per call when `decision` is given, and the live-view notice (if watched), in one statement.
 */
export async function recordLaterOutcome(client: Db, later: LaterOutcome): Promise<void> {
  const { decision } = later;
  await updateLaterOutcome(client, {
    ...later,
    decision: decision && { ...decision, latencyMs: wholeMs(decision.latencyMs) },
  });
}

/**
 * `recordLaterOutcome` in the same statement as the change it reports (`final`, see `updateLaterOutcomeWith`), for a
 * settle that needs no lock beyond that statement's own; null when the change found nothing to change.
 */
export async function recordLaterOutcomeWith(
  client: Db,
  later: LaterOutcome,
  final: Prisma.Sql,
): Promise<Outcome | null> {
  const { decision } = later;
  return updateLaterOutcomeWith(
    client,
    { ...later, decision: decision && { ...decision, latencyMs: wholeMs(decision.latencyMs) } },
    final,
  );
}
