import type { Db } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import type { Outcome } from "../../outcome";
import { CALLS_CHANNEL } from "../../live/sql";
import { moveOrderAtVersion } from "../../tools/sql";
import type { OrderChange } from "../../tools/types";
import type { CallRecord, DecisionRow, LaterOutcome } from "../types";
import type { ExposureReservation } from "../decide/sql";

// A change is announced only to conversations with an open live view (lib/live/index.ts): PostgreSQL serializes the
// commits of all notifying transactions (docs/decisions/004-notify-only-watched-conversations.md).
const watched = (conversationId: Prisma.Sql) =>
  Prisma.sql`EXISTS (SELECT 1 FROM "LiveWatch" w WHERE w."conversationId" = ${conversationId} AND w."expiresAt" > now())`;

/**
 * In one statement: the order moves (`moveOrderAtVersion`), and only with it the conversation's budgets (one write,
 * `irreversibleCents` more), the tool's own writes (`ToolEffect`, each reading `moved`) and, for a reservation against
 * the ceilings, its exposure row; without it, the reservation is given back. With `record`, the call's own row and its
 * decision-log row too: `record.moved` when the order moved, `record.changed` when it had moved on. Returns whether the
 * order moved.
 */
export async function moveOrderWithEffect(
  db: Db,
  move: {
    order: { id: string; version: number };
    change: OrderChange;
    conversation: { id: string; tenantId: string; agentId: string };
    callId: string;
    irreversibleCents: number;
    exposure: ExposureReservation | null;
    writes: Prisma.Sql[];
    record: { moved: CallRecord; changed: CallRecord } | null;
  },
): Promise<boolean> {
  const { conversation, irreversibleCents, exposure, record } = move;
  const ctes = [
    Prisma.sql`moved AS (${moveOrderAtVersion(move.order, move.change)})`,
    Prisma.sql`budgets AS (
        UPDATE "Conversation" SET "writesMade" = "writesMade" + 1, "irreversibleCents" = "irreversibleCents" + ${irreversibleCents}::int
        WHERE "id" = ${conversation.id} AND EXISTS (SELECT 1 FROM moved))`,
    ...move.writes.map((write, index) => Prisma.sql`${Prisma.raw(`write_${index}`)} AS (${write})`),
  ];
  if (exposure) {
    ctes.push(
      Prisma.sql`exposure AS (
        INSERT INTO "AutoExposure" ("tenantId", "agentId", "toolCallId", "amountCents", "createdAt", "tenantRunningCents", "agentRunningCents")
        SELECT ${conversation.tenantId}, ${conversation.agentId}, ${move.callId}, ${exposure.cents}::int, ${exposure.at}::timestamptz,
               ${exposure.tenantRunningCents}::bigint, ${exposure.agentRunningCents}::bigint
        FROM moved)`,
      Prisma.sql`released AS (
        UPDATE "ExposureTotal" SET "runningCents" = "runningCents" - ${exposure.cents}::bigint
        WHERE "tenantId" = ${conversation.tenantId} AND "agentId" IN ('', ${conversation.agentId}) AND NOT EXISTS (SELECT 1 FROM moved))`,
    );
  }
  if (record) {
    ctes.push(
      callRows(record.moved, "call_moved", Prisma.sql`EXISTS (SELECT 1 FROM moved)`),
      callRows(record.changed, "call_changed", Prisma.sql`NOT EXISTS (SELECT 1 FROM moved)`),
    );
  }
  const notify = record
    ? Prisma.sql`(SELECT count(pg_notify(${CALLS_CHANNEL}, ${conversation.id})) FROM (SELECT 1 FROM call_moved UNION ALL SELECT 1 FROM call_changed) AS recorded
         WHERE ${watched(Prisma.sql`${conversation.id}`)})`
    : Prisma.sql`0`;
  const [moved] = await db.$queryRaw<{ count: number }[]>`
      WITH ${Prisma.join(ctes, ",\n      ")}
      SELECT (SELECT count(*)::int FROM moved) AS "count", ${notify} AS "notified"`;
  return moved.count === 1;
}

/** The pending request of this conversation for this tool and canonical arguments (expired or not), or null. */
export async function findPendingApproval(
  db: Db,
  key: { conversationId: string; toolName: string; argsHash: string },
): Promise<{ id: string; expiresAt: Date; preview: unknown } | null> {
  const [open] = await db.$queryRaw<{ id: string; expiresAt: Date; preview: unknown }[]>`
    SELECT "id", "expiresAt", "preview" FROM "ApprovalRequest"
    WHERE "conversationId" = ${key.conversationId} AND "toolName" = ${key.toolName} AND "argsHash" = ${key.argsHash} AND "status" = 'pending'
    LIMIT 1`;
  return open ?? null;
}

export async function insertApproval(
  db: Db,
  request: {
    id: string;
    tenantId: string;
    conversationId: string;
    originCallId: string;
    toolName: string;
    orderId: string;
    argsHash: string;
    impactCents: number;
    preview: unknown;
    requestedById: string;
    expiresAt: Date;
  },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ApprovalRequest" ("id", "tenantId", "conversationId", "originCallId", "toolName", "orderId", "argsHash", "impactCents",
                                   "preview", "status", "requestedById", "expiresAt")
    VALUES (${request.id}, ${request.tenantId}, ${request.conversationId}, ${request.originCallId}, ${request.toolName}, ${request.orderId}, ${request.argsHash},
            ${request.impactCents}::int, ${JSON.stringify(request.preview)}::jsonb, 'pending', ${request.requestedById}, ${request.expiresAt.toISOString()}::timestamptz)`;
}

/** Closes the request as expired (decided at `now`) if it is pending and past its expiry; returns whether it did. */
export async function markApprovalExpired(db: Db, approvalId: string, now: string): Promise<boolean> {
  const closed = await db.$executeRaw`
    UPDATE "ApprovalRequest" SET "status" = 'expired', "resultCode" = 'approval.expired', "decidedAt" = ${now}::timestamptz
    WHERE "id" = ${approvalId} AND "status" = 'pending' AND "expiresAt" <= ${now}::timestamptz`;
  return closed > 0;
}

/** Closes the request as withdrawn (decided at `now`) if it is pending and not yet expired; returns whether it did. */
export async function markApprovalWithdrawn(db: Db, approvalId: string, now: string): Promise<boolean> {
  const closed = await db.$executeRaw`
    UPDATE "ApprovalRequest" SET "status" = 'withdrawn', "resultCode" = 'approval.withdrawn', "decidedAt" = ${now}::timestamptz
    WHERE "id" = ${approvalId} AND "status" = 'pending' AND "expiresAt" > ${now}::timestamptz`;
  return closed > 0;
}

/** Appends one decision-log row (`latencyMs` in whole milliseconds). */
export async function insertDecision(db: Db, row: DecisionRow): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "replayed", "latencyMs", "actorId", "detail")
    VALUES (${row.tenantId}, ${row.conversationId}, ${row.toolCallId}, ${row.toolName}, ${row.orderId}, ${row.outcome.kind}, ${row.outcome.stage},
            ${row.outcome.code}, ${row.replayed ?? false}, ${row.latencyMs}::int, ${row.actorId ?? null}::text,
            ${row.detail ? JSON.stringify(row.detail) : null}::jsonb)`;
}

/** Inserts the call's row and its decision-log row, and notifies `CALLS_CHANNEL` if its conversation is watched. */
export async function insertCall(db: Db, call: CallRecord): Promise<void> {
  await db.$executeRaw`
    WITH ${callRows(call, "call", Prisma.sql`true`)}
    SELECT pg_notify(${CALLS_CHANNEL}, ${call.conversationId}) FROM call WHERE ${watched(Prisma.sql`${call.conversationId}`)}`;
}

/**
 * Common table expressions that insert the call's row (`name`, returning its id and conversation) and its decision-log
 * row, only when `when` holds.
 */
function callRows(call: CallRecord, name: string, when: Prisma.Sql): Prisma.Sql {
  const { kind, stage, code } = call.outcome;
  const rows = Prisma.raw(`"${name}"`);
  return Prisma.sql`${rows} AS (
      INSERT INTO "ToolCall" ("id", "tenantId", "conversationId", "toolName", "callKey", "argsCanonical", "argsHash", "orderId", "approvalId", "kind", "stage", "code", "outcome")
      SELECT ${call.id}, ${call.tenantId}, ${call.conversationId}, ${call.toolName}, ${call.callKey}, ${call.argsCanonical}, ${call.argsHash}, ${call.orderId},
             ${call.approvalId}, ${kind}, ${stage}, ${code}, ${JSON.stringify(call.outcome)}::jsonb
      WHERE ${when}
      RETURNING "id", "conversationId"
    ), ${Prisma.raw(`"${name}_decision"`)} AS (
      INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "latencyMs", "detail")
      SELECT ${call.tenantId}, ${call.conversationId}, ${rows}."id", ${call.toolName}, ${call.orderId}, ${kind}, ${stage}, ${code}, ${call.latencyMs}::int,
             ${call.detail ? JSON.stringify(call.detail) : null}::jsonb
      FROM ${rows}
    )`;
}

/**
 * Sets `outcome` on the call `callId` and on every call waiting on `approvalId`, as the result of an approved
 * request, adds one decision-log row per call when `decision` is given, and notifies `CALLS_CHANNEL` for each
 * watched conversation among them.
 */
export async function updateLaterOutcome(db: Db, later: LaterOutcome): Promise<void> {
  await db.$queryRaw(
    laterOutcome(later, Prisma.sql`final AS (SELECT ${JSON.stringify(later.outcome)}::jsonb AS "outcome")`),
  );
}

/**
 * The same as `updateLaterOutcome` in the one statement that also makes the change the outcome reports: `final` is
 * that change's common table expressions, the last one named `final` with one column, `outcome` (the JSON the calls
 * keep; `later.outcome` gives its kind, stage and code). Nothing is recorded when `final` has no row. Returns the
 * outcome recorded, or null.
 */
export async function updateLaterOutcomeWith(db: Db, later: LaterOutcome, final: Prisma.Sql): Promise<Outcome | null> {
  const [row] = await db.$queryRaw<{ outcome: Outcome | null }[]>(laterOutcome(later, final));
  return row.outcome;
}

function laterOutcome(later: LaterOutcome, final: Prisma.Sql): Prisma.Sql {
  const { kind, stage, code } = later.outcome;
  const { decision } = later;
  return Prisma.sql`
    WITH ${final}, call AS (
      UPDATE "ToolCall" SET "kind" = ${kind}, "stage" = ${stage}, "code" = ${code}, "outcome" = (SELECT "outcome" FROM final), "updatedAt" = now()
      WHERE ("id" = ${later.callId}::text OR "approvalId" = ${later.approvalId}::text) AND EXISTS (SELECT 1 FROM final)
      RETURNING "id", "tenantId", "conversationId", "toolName", "orderId"
    ), approval AS (
      UPDATE "ApprovalRequest" SET "resultCode" = ${code}
      WHERE "id" = ${later.approvalId}::text AND "status" = 'approved' AND EXISTS (SELECT 1 FROM final)
    ), logged AS (
      INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "actorId", "latencyMs", "detail")
      SELECT call."tenantId", call."conversationId", call."id", call."toolName", call."orderId", ${kind}, ${stage}, ${code},
             ${decision?.actorId ?? null}::text, ${decision?.latencyMs ?? 0}::int,
             ${decision?.detail ? JSON.stringify(decision.detail) : null}::jsonb
      FROM call WHERE ${decision !== null}::boolean
    ), notified AS (
      SELECT pg_notify(${CALLS_CHANNEL}, changed."conversationId") FROM (SELECT DISTINCT "conversationId" FROM call) AS changed
      WHERE ${watched(Prisma.raw(`changed."conversationId"`))}
    )
    SELECT (SELECT "outcome" FROM final) AS "outcome", (SELECT count(*) FROM notified) AS "notified"`;
}
