import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import type { Outcome } from "../outcome";
import { CALLS_CHANNEL, countCall } from "../sql";
import { moveOrderAtVersion, ORDER_FACTS } from "../tools/sql";
import type { EarlierEffect, OrderChange, OrderFacts } from "../tools/types";
import type { CallRecord, DecisionRow, LaterOutcome, RateCount } from "./types";

// A change is announced only to conversations with an open live view (lib/live.ts): PostgreSQL serializes the
// commits of all notifying transactions (docs/decisions/004-notify-only-watched-conversations.md).
const watched = (conversationId: Prisma.Sql) =>
  Prisma.sql`EXISTS (SELECT 1 FROM "LiveWatch" w WHERE w."conversationId" = ${conversationId} AND w."expiresAt" > now())`;

/** A conversation's budgets and its agent's permission row (null when the agent is gone). */
export interface LockedConversationRow {
  writesMade: number;
  irreversibleCents: number;
  role: string | null;
  canRefund: boolean | null;
  active: boolean | null;
}

/** The conversation's budgets and its agent's permission row, the conversation row locked until the transaction ends. */
export async function lockConversationRow(db: Db, conversationId: string): Promise<LockedConversationRow | null> {
  const [row] = await db.$queryRaw<LockedConversationRow[]>`
    SELECT c."writesMade", c."irreversibleCents", u."role"::text AS "role", u."canRefund", u."active"
    FROM "Conversation" c LEFT JOIN "User" u ON u."id" = c."agentId" AND u."tenantId" = c."tenantId"
    WHERE c."id" = ${conversationId} FOR UPDATE OF c`;
  return row ?? null;
}

/** A reservation against both ceilings: the running totals it left and the time it holds its place in them. */
export interface ExposureReservation {
  cents: number;
  at: Date;
  tenantRunningCents: number;
  agentRunningCents: number;
}

// The running total at the 24-hour edge: that of the last exposure row at or before it, else what the prune job
// dropped (`baseCents`). Rows that old committed long before any statement that reads them (docs/decisions/021).
const tenantEdge = (tenantId: string) => Prisma.sql`COALESCE((
      SELECT e."tenantRunningCents" FROM "AutoExposure" e
      WHERE e."tenantId" = ${tenantId} AND e."createdAt" <= now() - interval '24 hours'
      ORDER BY e."createdAt" DESC, e."tenantRunningCents" DESC LIMIT 1), x."baseCents")`;
const agentEdge = (tenantId: string, agentId: string) => Prisma.sql`COALESCE((
      SELECT e."agentRunningCents" FROM "AutoExposure" e
      WHERE e."tenantId" = ${tenantId} AND e."agentId" = ${agentId} AND e."createdAt" <= now() - interval '24 hours'
      ORDER BY e."createdAt" DESC, e."agentRunningCents" DESC LIMIT 1), x."baseCents")`;

/**
 * Reserves `cents` against the tenant's and then the agent's rolling 24-hour ceiling, each by a conditional upsert of
 * its running total that PostgreSQL re-checks on the row's latest version once it holds the row's lock: the row
 * locks are the ceilings' serialization, from here to the commit. Null when the tenant's ceiling refuses (nothing
 * reserved); `agentRunningCents` null when only the agent's does (the tenant's part is reserved: release it).
 */
export async function reserveExposure(
  db: Db,
  at: { tenantId: string; agentId: string; cents: number },
): Promise<{ at: Date; tenantRunningCents: number; agentRunningCents: number | null } | null> {
  const { tenantId, agentId, cents } = at;
  const [reserved] = await db.$queryRaw<{ at: Date; tenantRunningCents: number; agentRunningCents: number | null }[]>`
    WITH ceilings AS (
      SELECT "agentDailyCeilingCents" AS "agent", "tenantDailyCeilingCents" AS "tenant" FROM "Tenant" WHERE "id" = ${tenantId}
    ), tenant AS (
      INSERT INTO "ExposureTotal" AS x ("tenantId", "agentId", "runningCents", "lastAt")
      SELECT ${tenantId}, '', ${cents}::bigint, clock_timestamp() FROM ceilings WHERE ${cents}::bigint <= ceilings."tenant"
      ON CONFLICT ("tenantId", "agentId") DO UPDATE
        SET "runningCents" = x."runningCents" + EXCLUDED."runningCents", "lastAt" = GREATEST(x."lastAt", EXCLUDED."lastAt")
        WHERE x."runningCents" + EXCLUDED."runningCents" - ${tenantEdge(tenantId)} <= (SELECT "tenant" FROM ceilings)
      RETURNING x."runningCents", x."lastAt"
    ), agent AS (
      INSERT INTO "ExposureTotal" AS x ("tenantId", "agentId", "runningCents", "lastAt")
      SELECT ${tenantId}, ${agentId}, ${cents}::bigint, tenant."lastAt" FROM tenant, ceilings WHERE ${cents}::bigint <= ceilings."agent"
      ON CONFLICT ("tenantId", "agentId") DO UPDATE
        SET "runningCents" = x."runningCents" + EXCLUDED."runningCents", "lastAt" = EXCLUDED."lastAt"
        WHERE x."runningCents" + EXCLUDED."runningCents" - ${agentEdge(tenantId, agentId)} <= (SELECT "agent" FROM ceilings)
      RETURNING x."runningCents"
    )
    SELECT tenant."lastAt" AS "at", tenant."runningCents"::float8 AS "tenantRunningCents",
           agent."runningCents"::float8 AS "agentRunningCents"
    FROM tenant LEFT JOIN agent ON true`;
  return reserved ?? null;
}

/** Gives back a reservation that made no exposure row (the transaction still holds the rows' locks). */
export async function releaseExposure(
  db: Db,
  at: { tenantId: string; agentId: string | null; cents: number },
): Promise<void> {
  await db.$executeRaw`
    UPDATE "ExposureTotal" SET "runningCents" = "runningCents" - ${at.cents}::bigint
    WHERE "tenantId" = ${at.tenantId} AND "agentId" IN ('', ${at.agentId ?? ""})`;
}

/** The tenant's ceilings and the agent's and tenant's automatic exposure of the last 24 hours, in cents. */
export async function readExposure(
  db: Db,
  at: { tenantId: string; agentId: string },
): Promise<{ agentCeilingCents: number; tenantCeilingCents: number; agent: number; tenant: number }> {
  const [row] = await db.$queryRaw<
    { agentCeilingCents: number; tenantCeilingCents: number; agent: number; tenant: number }[]
  >`
    SELECT t."agentDailyCeilingCents" AS "agentCeilingCents", t."tenantDailyCeilingCents" AS "tenantCeilingCents",
           COALESCE((SELECT x."runningCents" - ${agentEdge(at.tenantId, at.agentId)} FROM "ExposureTotal" x
                     WHERE x."tenantId" = t."id" AND x."agentId" = ${at.agentId}), 0)::float8 AS "agent",
           COALESCE((SELECT x."runningCents" - ${tenantEdge(at.tenantId)} FROM "ExposureTotal" x
                     WHERE x."tenantId" = t."id" AND x."agentId" = ''), 0)::float8 AS "tenant"
    FROM "Tenant" t WHERE t."id" = ${at.tenantId}`;
  return row;
}

/**
 * Deletes the exposure rows older than 25 hours and keeps, on each running total they belonged to, the running total
 * of the last one dropped: the edge of a window no row of which is left. Returns how many rows went. The totals are
 * locked in key order (the tenant's own row first), as a reservation locks them.
 */
export async function deleteOldAutoExposure(db: Db): Promise<number> {
  const [gone] = await db.$queryRaw<{ count: number }[]>`
    WITH gone AS (
      DELETE FROM "AutoExposure" WHERE "createdAt" < now() - interval '25 hours'
      RETURNING "tenantId", "agentId", "tenantRunningCents", "agentRunningCents"
    ), bases AS (
      SELECT "tenantId", '' AS "agentId", MAX("tenantRunningCents") AS "base" FROM gone GROUP BY "tenantId"
      UNION ALL
      SELECT "tenantId", "agentId", MAX("agentRunningCents") FROM gone GROUP BY "tenantId", "agentId"
    ), locked AS (
      SELECT x."tenantId", x."agentId", b."base" FROM "ExposureTotal" x JOIN bases b USING ("tenantId", "agentId")
      ORDER BY x."tenantId", x."agentId" FOR UPDATE OF x
    ), based AS (
      UPDATE "ExposureTotal" x SET "baseCents" = GREATEST(x."baseCents", l."base") FROM locked l
      WHERE x."tenantId" = l."tenantId" AND x."agentId" = l."agentId"
    )
    SELECT count(*)::int AS "count" FROM gone`;
  return gone.count;
}

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

/** Counts one call in the conversation's bucket and the agent's (`countCall`); returns both as it left them. */
export async function countCallIn(db: Db, conversationKey: string, agentKey: string): Promise<RateCount[]> {
  return db.$queryRaw<RateCount[]>(countCall(Prisma.sql`ARRAY[${conversationKey}::text, ${agentKey}::text]`));
}

/** Counts one conversation opened in the person's "o:u:" bucket; returns it with its tenant's `rateOpenPerMin`. */
export async function countOpenIn(
  db: Db,
  opener: { bucket: string; tenantId: string },
): Promise<(RateCount & { limit: number }) | undefined> {
  const [row] = await db.$queryRaw<(RateCount & { limit: number })[]>`
    WITH counted AS (${countCall(Prisma.sql`ARRAY[${opener.bucket}::text]`)})
    SELECT counted.*, t."rateOpenPerMin" AS "limit" FROM counted JOIN "Tenant" t ON t."id" = ${opener.tenantId}`;
  return row;
}

/** Deletes the rate buckets of windows that have ended; returns how many. */
export async function deleteEndedRateBuckets(db: Db): Promise<number> {
  return db.$executeRaw`DELETE FROM "RateBucket" WHERE "windowStart" < date_trunc('minute', now())`;
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

/**
 * What the policy rules read beyond the order's facts: the customer's flag, age and refunds of the last 7 days, the
 * order's age, the agent's refunds today, role, age and automatic exposure, and the time in the tenant's zone.
 */
export interface RuleFactsRow {
  fraudWatch: boolean;
  customerAgeDays: number;
  orderAgeDays: number;
  agentRefundsToday: number;
  agentRole: string;
  agentAgeDays: number;
  agentExposureCents: number;
  customerRefunds7d: number;
  customerRefundedCents7d: number;
  localHour: number;
  localWeekday: number;
}

/** The agent's refunds today are counted up to this many: a busy tenant's day is never scanned whole for one call. */
export const REFUNDS_TODAY_CAP = 100;

/** Everything the checks of one call read, beside the order: see `findCallFacts`. */
export interface CallFactsRow extends OrderFacts, RuleFactsRow {
  stored: { id: string; argsHash: string | null; outcome: unknown } | null;
  recent: (Omit<EarlierEffect, "at"> & { at: string })[] | null;
}

/** The customer's refunds of the last 7 days, capped like the agent's refunds today; `column` of them. */
const customerRefunds7d = (tenantId: string, column: Prisma.Sql) => Prisma.sql`(
             SELECT ${column} FROM (
               SELECT r."amountCents" FROM "Order" ro JOIN "Refund" r ON r."orderId" = ro."id"
               WHERE ro."tenantId" = ${tenantId} AND ro."customerId" = cu."id"
                 AND r."createdAt" >= now() - interval '7 days'
               LIMIT ${REFUNDS_TODAY_CAP}
             ) recent)`;

/**
 * The columns of a `RuleFactsRow`, on the order `o` and its customer `cu`: scalar subqueries of the one statement
 * that loads the call's order, so the richer facts cost no round trip.
 */
function ruleFactsColumns(at: { tenantId: string; agentId: string; countRefunds: boolean }): Prisma.Sql {
  return Prisma.sql`cu."fraudWatch",
           (SELECT a."role"::text FROM "User" a WHERE a."id" = ${at.agentId}) AS "agentRole",
           (SELECT floor(extract(epoch FROM now() - a."createdAt") / 86400)::int FROM "User" a
             WHERE a."id" = ${at.agentId}) AS "agentAgeDays",
           COALESCE((SELECT x."runningCents" - ${agentEdge(at.tenantId, at.agentId)} FROM "ExposureTotal" x
             WHERE x."tenantId" = ${at.tenantId} AND x."agentId" = ${at.agentId}), 0)::float8 AS "agentExposureCents",
           ${customerRefunds7d(at.tenantId, Prisma.sql`count(*)::int`)} AS "customerRefunds7d",
           ${customerRefunds7d(at.tenantId, Prisma.sql`COALESCE(sum("amountCents"), 0)::float8`)} AS "customerRefundedCents7d",
           (SELECT extract(hour FROM now() AT TIME ZONE t."timeZone")::int FROM "Tenant" t
             WHERE t."id" = ${at.tenantId}) AS "localHour",
           (SELECT extract(isodow FROM now() AT TIME ZONE t."timeZone")::int FROM "Tenant" t
             WHERE t."id" = ${at.tenantId}) AS "localWeekday",
           floor(extract(epoch FROM now() - cu."createdAt") / 86400)::int AS "customerAgeDays",
           floor(extract(epoch FROM now() - o."placedAt") / 86400)::int AS "orderAgeDays",
           CASE WHEN ${at.countRefunds} THEN (
             SELECT count(*)::int FROM (
               SELECT 1 FROM "Refund" r
               JOIN "ToolCall" tc ON tc."id" = r."toolCallId"
               JOIN "Conversation" c ON c."id" = tc."conversationId"
               WHERE r."tenantId" = ${at.tenantId} AND c."agentId" = ${at.agentId}
                 AND r."createdAt" >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
               LIMIT ${REFUNDS_TODAY_CAP}
             ) today
           ) ELSE 0 END AS "agentRefundsToday"`;
}

/**
 * In one statement, the order with this id only when it belongs to this tenant and customer, and beside it what the
 * later stages decide from: the call stored under this call key (stage 8), the order's earlier effects the tool
 * declares (`recent`, a scalar subquery on the order `o`; the duplicate-intent guard), and the facts the policy rules
 * read (counting the agent's refunds today only when `countRefunds`). Null when the order is not the customer's.
 */
export async function findCallFacts(
  db: Db,
  at: {
    orderId: string;
    tenantId: string;
    customerId: string;
    agentId: string;
    key: { conversationId: string; toolName: string; callKey: string } | null;
    recent: Prisma.Sql | null;
    countRefunds: boolean;
  },
): Promise<CallFactsRow | null> {
  const { key } = at;
  const [row] = await db.$queryRaw<CallFactsRow[]>`
    SELECT ${ORDER_FACTS},
           ${
             key
               ? Prisma.sql`(SELECT json_build_object('id', k."id", 'argsHash', k."argsHash", 'outcome', k."outcome") FROM "ToolCall" k
                  WHERE k."conversationId" = ${key.conversationId} AND k."toolName" = ${key.toolName} AND k."callKey" = ${key.callKey})`
               : Prisma.sql`NULL::json`
           } AS "stored",
           ${at.recent ?? Prisma.sql`NULL::json`} AS "recent",
           ${ruleFactsColumns(at)}
    FROM "Order" o JOIN "Customer" cu ON cu."id" = o."customerId"
    WHERE o."id" = ${at.orderId} AND o."tenantId" = ${at.tenantId} AND o."customerId" = ${at.customerId}`;
  return row ?? null;
}

/**
 * The rules' facts of an order already loaded, read again in a statement of their own: one that starts after the
 * exposure reservation's locks are held sees every refund committed before them (docs/decisions/023).
 */
export async function findRuleFacts(
  db: Db,
  at: { orderId: string; tenantId: string; agentId: string; countRefunds: boolean },
): Promise<RuleFactsRow | null> {
  const [row] = await db.$queryRaw<RuleFactsRow[]>`
    SELECT ${ruleFactsColumns(at)}
    FROM "Order" o JOIN "Customer" cu ON cu."id" = o."customerId"
    WHERE o."id" = ${at.orderId} AND o."tenantId" = ${at.tenantId}`;
  return row ?? null;
}

/** The text of a published rule set of the tenant (versions are never edited). */
export async function findRuleSetText(db: Db, tenantId: string, id: string): Promise<string | undefined> {
  const [row] = await db.$queryRaw<{ text: string }[]>`
    SELECT "text" FROM "PolicyRuleSet" WHERE "id" = ${id} AND "tenantId" = ${tenantId}`;
  return row?.text;
}
