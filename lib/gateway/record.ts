import type { Db } from "../db";
import type { Outcome } from "./outcome";
import { insertCall, insertDecision, updateLaterOutcome } from "./sql";

export const UNKNOWN_TOOL = "(unknown)";
export { CALLS_CHANNEL } from "./sql";

/** A latency as the log stores it: whole milliseconds, never negative. */
const wholeMs = (ms: number) => Math.max(0, Math.round(ms));

export interface DecisionRow {
  tenantId: string;
  actorId?: string | null;
  detail?: Record<string, unknown>;
  conversationId: string | null;
  toolCallId: string | null;
  toolName: string;
  orderId: string | null;
  outcome: Pick<Outcome, "kind" | "stage" | "code">;
  replayed?: boolean;
  latencyMs: number;
}

export interface CallRecord {
  id: string;
  tenantId: string;
  conversationId: string;
  toolName: string;
  /** Only outcomes that are final for this key bind it; a transient one leaves the key free for a retry. */
  callKey: string | null;
  argsCanonical: string | null;
  argsHash: string | null;
  orderId: string | null;
  approvalId: string | null;
  outcome: Outcome;
  latencyMs: number;
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
export async function recordLaterOutcome(
  client: Db,
  later: {
    callId: string | null;
    approvalId: string | null;
    outcome: Outcome;
    decision: { actorId: string | null; latencyMs: number; detail?: Record<string, unknown> } | null;
  },
): Promise<void> {
  const { decision } = later;
  await updateLaterOutcome(client, {
    ...later,
    decision: decision && { ...decision, latencyMs: wholeMs(decision.latencyMs) },
  });
}
