import type { Db, Tx } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import type { Outcome } from "../../outcome";
import { CALLS_CHANNEL } from "../../live/sql";
import { moveOrderAtVersion } from "../../tools/sql";
import type { OrderChange } from "../../tools/types";
import type { CallRecord, DecisionRow, LaterOutcome } from "../types";
import { releaseExposure, reservationCtes, type Exposure } from "../decide/sql";

/** The SQLSTATE of `toolgate_effect_not_moved()` (prisma/migrations/20261209100000_effect_not_moved). */
const EFFECT_NOT_MOVED = "TG001";

/** Whether `error` is an effect statement's refusal to commit an order that did not move (`commit` below). */
export const effectNotMoved = (error: unknown) =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === EFFECT_NOT_MOVED;

// A change is announced only to conversations with an open live view (lib/live/index.ts): PostgreSQL serializes the
// commits of all notifying transactions (docs/decisions/004-notify-only-watched-conversations.md).
const watched = (conversationId: Prisma.Sql) =>
  Prisma.sql`EXISTS (SELECT 1 FROM "LiveWatch" w WHERE w."conversationId" = ${conversationId} AND w."expiresAt" > now())`;

/**
 * In one statement: the order moves (`moveOrderAtVersion`), and only with it the conversation's budgets (one write,
 * `irreversibleCents` more), the tool's own writes (`ToolEffect`, each reading `moved`) and, for an exposure against
 * the ceilings, its exposure row. An exposure reserved before is given back in the statement when the order had moved
 * on; `reserveCents` is reserved by the statement itself, first (`reservationCtes`), and the order moves only if both
 * ceilings let it: its locks are then held for this statement and the commit alone. With `record`, the call's own row
 * and its decision-log row too: `record.moved` when the order moved, `record.changed` when it had moved on (nothing
 * when a ceiling refused). Returns which of the three happened; what a refused or unused reservation took is given
 * back before it returns (its transaction still holds the rows' locks).
 */
export async function moveOrderWithEffect(
  db: Db,
  move: {
    order: { id: string; version: number };
    change: OrderChange;
    conversation: { id: string; tenantId: string; agentId: string };
    callId: string;
    irreversibleCents: number;
    exposure: Exposure | null;
    writes: Prisma.Sql[];
    record: { moved: CallRecord; changed: CallRecord } | null;
    /**
     * The transaction the statement commits in its own round trip (`Tx.$queryThenCommit`), or null. Only the order's
     * move may then commit: any other end raises `EFFECT_NOT_MOVED` instead, nothing commits, and the caller runs
     * the call again in a transaction that commits on its own (docs/decisions/029).
     */
    commit: Tx | null;
  },
): Promise<"moved" | "changed" | "refused"> {
  const { conversation, irreversibleCents, exposure, record } = move;
  const reserving = exposure && "reserveCents" in exposure ? exposure.reserveCents : null;
  const before = exposure && !("reserveCents" in exposure) ? exposure : null;
  const reserved = Prisma.sql`EXISTS (SELECT 1 FROM reserved)`;
  const ctes =
    reserving === null
      ? []
      : [
          reservationCtes({ tenantId: conversation.tenantId, agentId: conversation.agentId, cents: reserving }),
          Prisma.sql`reserved AS (
        SELECT tenant."lastAt" AS "at", tenant."runningCents" AS "tenantRunningCents", agent."runningCents" AS "agentRunningCents"
        FROM tenant JOIN agent ON true)`,
        ];
  ctes.push(
    Prisma.sql`moved AS (${moveOrderAtVersion(move.order, move.change, reserving === null ? Prisma.empty : Prisma.sql`AND ${reserved}`)})`,
    Prisma.sql`budgets AS (
        UPDATE "Conversation" SET "writesMade" = "writesMade" + 1, "irreversibleCents" = "irreversibleCents" + ${irreversibleCents}::int
        WHERE "id" = ${conversation.id} AND EXISTS (SELECT 1 FROM moved))`,
    ...move.writes.map((write, index) => Prisma.sql`${Prisma.raw(`write_${index}`)} AS (${write})`),
  );
  // The exposure row keeps the reservation's time and running totals: this statement's own, or those made before.
  const claim =
    reserving !== null
      ? {
          cents: reserving,
          totals: Prisma.sql`r."at", r."tenantRunningCents", r."agentRunningCents" FROM moved, reserved r`,
        }
      : before && {
          cents: before.cents,
          totals: Prisma.sql`${before.at}::timestamptz, ${before.tenantRunningCents}::bigint, ${before.agentRunningCents}::bigint FROM moved`,
        };
  if (claim) {
    ctes.push(Prisma.sql`exposure AS (
        INSERT INTO "AutoExposure" ("tenantId", "agentId", "toolCallId", "amountCents", "createdAt", "tenantRunningCents", "agentRunningCents")
        SELECT ${conversation.tenantId}, ${conversation.agentId}, ${move.callId}, ${claim.cents}::int, ${claim.totals})`);
  }
  if (before) {
    ctes.push(Prisma.sql`released AS (
        UPDATE "ExposureTotal" SET "runningCents" = "runningCents" - ${before.cents}::bigint
        WHERE "tenantId" = ${conversation.tenantId} AND "agentId" IN ('', ${conversation.agentId}) AND NOT EXISTS (SELECT 1 FROM moved))`);
  }
  if (record) {
    const changed = reserving === null ? Prisma.empty : Prisma.sql` AND ${reserved}`;
    ctes.push(
      callRows(record.moved, "call_moved", Prisma.sql`EXISTS (SELECT 1 FROM moved)`),
      callRows(record.changed, "call_changed", Prisma.sql`NOT EXISTS (SELECT 1 FROM moved)${changed}`),
    );
  }
  const notify = record
    ? Prisma.sql`(SELECT count(pg_notify(${CALLS_CHANNEL}, ${conversation.id})) FROM (SELECT 1 FROM call_moved UNION ALL SELECT 1 FROM call_changed) AS recorded
         WHERE ${watched(Prisma.sql`${conversation.id}`)})`
    : Prisma.sql`0`;
  const claims =
    reserving === null
      ? Prisma.sql`1 AS "tenant", 1 AS "agent"`
      : Prisma.sql`(SELECT count(*)::int FROM tenant) AS "tenant", (SELECT count(*)::int FROM agent) AS "agent"`;
  const count = move.commit
    ? Prisma.sql`CASE WHEN EXISTS (SELECT 1 FROM moved) THEN 1 ELSE toolgate_effect_not_moved() END`
    : Prisma.sql`(SELECT count(*)::int FROM moved)`;
  const statement = Prisma.sql`
      WITH ${Prisma.join(ctes, ",\n      ")}
      SELECT ${count} AS "count", ${claims}, ${notify} AS "notified"`;
  type Row = { count: number; tenant: number; agent: number };
  const [row] = move.commit
    ? await move.commit.$queryThenCommit<Row[]>(statement)
    : await db.$queryRaw<Row[]>(statement);
  if (row.count === 1) return "moved";
  if (reserving !== null && row.tenant === 1) {
    // The tenant's part was reserved and is not used: the agent's ceiling refused, or the order had moved on.
    const agentId = row.agent === 1 ? conversation.agentId : null;
    await releaseExposure(db, { tenantId: conversation.tenantId, agentId, cents: reserving });
  }
  return row.tenant === 1 && row.agent === 1 ? "changed" : "refused";
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

// What is absent (a call id, an approval, a decision to log) leaves its condition or its statement out rather than
// passing a null for the statement to test: PostgreSQL would plan such a prepared statement anew on every execution,
// its plan for each null always cheaper than one plan for all, and the settle of every refund pays that planning.
function laterOutcome(later: LaterOutcome, final: Prisma.Sql): Prisma.Sql {
  const { kind, stage, code } = later.outcome;
  const { decision } = later;
  const targets = [
    ...(later.callId !== null ? [Prisma.sql`"id" = ${later.callId}::text`] : []),
    ...(later.approvalId !== null ? [Prisma.sql`"approvalId" = ${later.approvalId}::text`] : []),
  ];
  const approval =
    later.approvalId !== null
      ? Prisma.sql`, approval AS (
      UPDATE "ApprovalRequest" SET "resultCode" = ${code}
      WHERE "id" = ${later.approvalId}::text AND "status" = 'approved' AND EXISTS (SELECT 1 FROM final)
    )`
      : Prisma.empty;
  const logged =
    decision !== null
      ? Prisma.sql`, logged AS (
      INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "actorId", "latencyMs", "detail")
      SELECT call."tenantId", call."conversationId", call."id", call."toolName", call."orderId", ${kind}, ${stage}, ${code},
             ${decision.actorId}::text, ${decision.latencyMs}::int, ${decision.detail ? JSON.stringify(decision.detail) : null}::jsonb
      FROM call
    )`
      : Prisma.empty;
  // The call's outcome keeps the supervisor's narrowing (`decision`) its approval recorded: the refund's settle, which
  // comes after it, does not know it.
  return Prisma.sql`
    WITH ${final}, call AS (
      UPDATE "ToolCall" SET "kind" = ${kind}, "stage" = ${stage}, "code" = ${code},
        "outcome" = jsonb_strip_nulls(jsonb_build_object('decision', "outcome"->'decision')) || (SELECT "outcome" FROM final),
        "updatedAt" = now()
      WHERE (${targets.length > 0 ? Prisma.join(targets, " OR ") : Prisma.sql`false`}) AND EXISTS (SELECT 1 FROM final)
      RETURNING "id", "tenantId", "conversationId", "toolName", "orderId"
    )${approval}${logged}, notified AS (
      SELECT pg_notify(${CALLS_CHANNEL}, changed."conversationId") FROM (SELECT DISTINCT "conversationId" FROM call) AS changed
      WHERE ${watched(Prisma.raw(`changed."conversationId"`))}
    )
    SELECT (SELECT "outcome" FROM final) AS "outcome", (SELECT count(*) FROM notified) AS "notified"`;
}
