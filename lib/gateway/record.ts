import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import type { Outcome } from "./outcome";

export const UNKNOWN_TOOL = "(unknown)";
export const CALLS_CHANNEL = "toolgate_calls";

// A change is announced only to conversations with an open live view (lib/live.ts): PostgreSQL serializes the
// commits of all notifying transactions (docs/decisions/004-notify-only-watched-conversations.md).
const watched = (conversationId: Prisma.Sql) =>
  Prisma.sql`EXISTS (SELECT 1 FROM "LiveWatch" w WHERE w."conversationId" = ${conversationId} AND w."expiresAt" > now())`;

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
  await client.$executeRaw`
    INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "replayed", "latencyMs", "actorId", "detail")
    VALUES (${row.tenantId}, ${row.conversationId}, ${row.toolCallId}, ${row.toolName}, ${row.orderId}, ${row.outcome.kind}, ${row.outcome.stage},
            ${row.outcome.code}, ${row.replayed ?? false}, ${Math.max(0, Math.round(row.latencyMs))}::int, ${row.actorId ?? null}::text,
            ${row.detail ? JSON.stringify(row.detail) : null}::jsonb)`;
}

/** The call's own row, its decision-log row and the live-view notice (if watched), in one statement. */
export async function recordCall(client: Db, call: CallRecord): Promise<void> {
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
    SELECT pg_notify(${CALLS_CHANNEL}, ${call.conversationId}) FROM decision WHERE ${watched(Prisma.sql`${call.conversationId}`)}`;
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
  const { kind, stage, code } = later.outcome;
  const { decision } = later;
  await client.$executeRaw`
    WITH call AS (
      UPDATE "ToolCall" SET "kind" = ${kind}, "stage" = ${stage}, "code" = ${code}, "outcome" = ${JSON.stringify(later.outcome)}::jsonb, "updatedAt" = now()
      WHERE "id" = ${later.callId}::text OR "approvalId" = ${later.approvalId}::text
      RETURNING "id", "tenantId", "conversationId", "toolName", "orderId"
    ), approval AS (
      UPDATE "ApprovalRequest" SET "resultCode" = ${code} WHERE "id" = ${later.approvalId}::text AND "status" = 'approved'
    ), logged AS (
      INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "actorId", "latencyMs", "detail")
      SELECT call."tenantId", call."conversationId", call."id", call."toolName", call."orderId", ${kind}, ${stage}, ${code},
             ${decision?.actorId ?? null}::text, ${Math.max(0, Math.round(decision?.latencyMs ?? 0))}::int,
             ${decision?.detail ? JSON.stringify(decision.detail) : null}::jsonb
      FROM call WHERE ${decision !== null}::boolean
    )
    SELECT pg_notify(${CALLS_CHANNEL}, changed."conversationId") FROM (SELECT DISTINCT "conversationId" FROM call) AS changed
    WHERE ${watched(Prisma.raw(`changed."conversationId"`))}`;
}
