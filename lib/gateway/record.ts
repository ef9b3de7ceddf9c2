import type { Tx } from "../db";
import type { Prisma } from "../generated/prisma/client";
import type { Outcome } from "./outcome";

export const UNKNOWN_TOOL = "(unknown)";

export interface DecisionRow {
  tenantId: string;
  conversationId: string | null;
  toolCallId: string | null;
  toolName: string;
  orderId: string | null;
  outcome: Pick<Outcome, "kind" | "stage" | "code">;
  actorId?: string | null;
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

/** Stage 13, and the only writer of the decision log: names, ids and codes, never model text or values. */
export async function appendDecision(client: Tx, row: DecisionRow): Promise<void> {
  await client.$executeRaw`
    INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "actorId", "replayed", "latencyMs")
    VALUES (${row.tenantId}, ${row.conversationId}, ${row.toolCallId}, ${row.toolName}, ${row.orderId}, ${row.outcome.kind}, ${row.outcome.stage},
            ${row.outcome.code}, ${row.actorId ?? null}, ${row.replayed ?? false}, ${Math.max(0, Math.round(row.latencyMs))}::int)`;
}

/** The call's own row, its decision-log row and the live-view notice, in one statement. */
export async function recordCall(client: Tx, call: CallRecord): Promise<void> {
  const { kind, stage, code } = call.outcome;
  await client.$executeRaw`
    WITH call AS (
      INSERT INTO "ToolCall" ("id", "tenantId", "conversationId", "toolName", "callKey", "argsCanonical", "argsHash", "orderId", "approvalId", "kind", "stage", "code", "outcome")
      VALUES (${call.id}, ${call.tenantId}, ${call.conversationId}, ${call.toolName}, ${call.callKey}, ${call.argsCanonical}, ${call.argsHash}, ${call.orderId},
              ${call.approvalId}, ${kind}, ${stage}, ${code}, ${JSON.stringify(call.outcome)}::jsonb)
      RETURNING "id"
    ), decision AS (
      INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "latencyMs")
      SELECT ${call.tenantId}, ${call.conversationId}, call."id", ${call.toolName}, ${call.orderId}, ${kind}, ${stage}, ${code}, ${Math.max(0, Math.round(call.latencyMs))}::int
      FROM call
      RETURNING "id"
    )
    SELECT pg_notify(${CALLS_CHANNEL}, ${call.conversationId}) FROM decision`;
}

/**
 * A call's outcome decided after the fact by a system (the payment provider's answer): the call's row, its
 * approval's result, the decision-log row when the outcome is final, and the live-view notice, in one statement.
 */
export async function recordSettlement(
  client: Tx,
  settlement: { callId: string; approvalId: string | null; outcome: Outcome; decision: Omit<DecisionRow, "toolCallId"> | null },
): Promise<void> {
  const { kind, stage, code } = settlement.outcome;
  const decision = settlement.decision;
  await client.$executeRaw`
    WITH call AS (
      -- The call that ran, and every repeat of it that waits on the same approval request.
      UPDATE "ToolCall" SET "kind" = ${kind}, "stage" = ${stage}, "code" = ${code}, "outcome" = ${JSON.stringify(settlement.outcome)}::jsonb, "updatedAt" = now()
      WHERE "id" = ${settlement.callId} OR "approvalId" = ${settlement.approvalId}::text
      RETURNING "id", "conversationId"
    ), approval AS (
      UPDATE "ApprovalRequest" SET "resultCode" = ${code} WHERE "id" = ${settlement.approvalId}::text AND "status" = 'approved'
    ), decision AS (
      INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "latencyMs")
      SELECT ${decision?.tenantId ?? null}::text, call."conversationId", call."id", ${decision?.toolName ?? null}::text, ${decision?.orderId ?? null}::text,
             ${kind}, ${stage}, ${code}, 0
      FROM call WHERE ${decision !== null}::boolean
    )
    SELECT pg_notify(${CALLS_CHANNEL}, "conversationId") FROM (SELECT DISTINCT "conversationId" FROM call) AS changed`;
}

export const CALLS_CHANNEL = "toolgate_calls";

/** Tells live views that a conversation's calls changed; PostgreSQL delivers it only if the transaction commits. */
export async function notifyConversation(client: Tx, conversationId: string): Promise<void> {
  await client.$executeRaw`SELECT pg_notify(${CALLS_CHANNEL}, ${conversationId})`;
}

/** A call's outcome changes after the fact only through a decision (approve, deny, expire). */
export async function updateCallOutcome(client: Tx, where: Prisma.ToolCallWhereInput, next: Outcome): Promise<number> {
  const updated = await client.toolCall.updateMany({
    where,
    data: { kind: next.kind, stage: next.stage, code: next.code, outcome: toJson(next), updatedAt: new Date() },
  });
  return updated.count;
}

export function toJson(outcome: Outcome): Prisma.InputJsonValue {
  return JSON.parse(JSON.stringify(outcome)) as Prisma.InputJsonValue;
}
