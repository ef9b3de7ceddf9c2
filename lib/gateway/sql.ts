import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import { CALLS_CHANNEL, countCall } from "../sql";
import { moveOrderAtVersion } from "../tools/sql";
import type { OrderChange } from "../tools/types";
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

export async function findCallByKey(
  db: Db,
  key: { conversationId: string; toolName: string; callKey: string },
): Promise<{ id: string; argsHash: string | null; outcome: unknown } | null> {
  const [stored] = await db.$queryRaw<{ id: string; argsHash: string | null; outcome: unknown }[]>`
    SELECT "id", "argsHash", "outcome" FROM "ToolCall"
    WHERE "conversationId" = ${key.conversationId} AND "toolName" = ${key.toolName} AND "callKey" = ${key.callKey}`;
  return stored ?? null;
}

/**
 * The tenant's 24-hour exposure ceilings, its row locked (FOR NO KEY UPDATE) until the transaction ends, so the
 * automatic irreversible effects of one tenant are summed and recorded one at a time.
 */
export async function lockTenantCeilings(
  db: Db,
  tenantId: string,
): Promise<{ agentDailyCeilingCents: number; tenantDailyCeilingCents: number }> {
  const [ceilings] = await db.$queryRaw<{ agentDailyCeilingCents: number; tenantDailyCeilingCents: number }[]>`
    SELECT "agentDailyCeilingCents", "tenantDailyCeilingCents" FROM "Tenant" WHERE "id" = ${tenantId} FOR NO KEY UPDATE`;
  return ceilings;
}

/** The automatic irreversible exposure of the last 24 hours, of this agent and of its whole tenant, in cents. */
export async function sumAutoExposure(
  db: Db,
  conversation: { tenantId: string; agentId: string },
): Promise<{ agent: number; tenant: number }> {
  const [used] = await db.$queryRaw<{ agent: string; tenant: string }[]>`
    SELECT COALESCE(SUM("amountCents") FILTER (WHERE "agentId" = ${conversation.agentId}), 0)::bigint AS "agent",
           COALESCE(SUM("amountCents"), 0)::bigint AS "tenant"
    FROM "AutoExposure" WHERE "tenantId" = ${conversation.tenantId} AND "createdAt" > now() - interval '24 hours'`;
  return { agent: Number(used.agent), tenant: Number(used.tenant) };
}

/** Deletes the exposure rows older than 25 hours; returns how many. */
export async function deleteOldAutoExposure(db: Db): Promise<number> {
  return db.$executeRaw`DELETE FROM "AutoExposure" WHERE "createdAt" < now() - interval '25 hours'`;
}

/**
 * In one statement: the order moves (`moveOrderAtVersion`), and only with it the conversation's budgets (one
 * write, `irreversibleCents` more) and, when `exposureCents` is above 0, the agent's automatic exposure. Returns
 * whether the order moved.
 */
export async function moveOrderWithBudgets(
  db: Db,
  move: {
    order: { id: string; version: number };
    change: OrderChange;
    conversation: { id: string; tenantId: string; agentId: string };
    callId: string;
    irreversibleCents: number;
    exposureCents: number;
  },
): Promise<boolean> {
  const { conversation, irreversibleCents, exposureCents } = move;
  const [moved] = await db.$queryRaw<{ count: number }[]>`
      WITH moved AS (${moveOrderAtVersion(move.order, move.change)}
      ), budgets AS (
        UPDATE "Conversation" SET "writesMade" = "writesMade" + 1, "irreversibleCents" = "irreversibleCents" + ${irreversibleCents}::int
        WHERE "id" = ${conversation.id} AND EXISTS (SELECT 1 FROM moved)
      ), exposure AS (
        INSERT INTO "AutoExposure" ("tenantId", "agentId", "toolCallId", "amountCents")
        SELECT ${conversation.tenantId}, ${conversation.agentId}, ${move.callId}, ${exposureCents}::int FROM moved WHERE ${exposureCents}::int > 0
      )
      SELECT count(*)::int AS "count" FROM moved`;
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
  const { kind, stage, code } = call.outcome;
  await db.$executeRaw`
    WITH call AS (
      INSERT INTO "ToolCall" ("id", "tenantId", "conversationId", "toolName", "callKey", "argsCanonical", "argsHash", "orderId", "approvalId", "kind", "stage", "code", "outcome")
      VALUES (${call.id}, ${call.tenantId}, ${call.conversationId}, ${call.toolName}, ${call.callKey}, ${call.argsCanonical}, ${call.argsHash}, ${call.orderId},
              ${call.approvalId}, ${kind}, ${stage}, ${code}, ${JSON.stringify(call.outcome)}::jsonb)
      RETURNING "id"
    ), decision AS (
      INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "latencyMs", "detail")
      SELECT ${call.tenantId}, ${call.conversationId}, call."id", ${call.toolName}, ${call.orderId}, ${kind}, ${stage}, ${code}, ${call.latencyMs}::int,
             ${call.detail ? JSON.stringify(call.detail) : null}::jsonb
      FROM call
      RETURNING "id"
    )
    SELECT pg_notify(${CALLS_CHANNEL}, ${call.conversationId}) FROM decision WHERE ${watched(Prisma.sql`${call.conversationId}`)}`;
}

/**
 * Sets `outcome` on the call `callId` and on every call waiting on `approvalId`, as the result of an approved
 * request, adds one decision-log row per call when `decision` is given, and notifies `CALLS_CHANNEL` for each
 * watched conversation among them.
 */
export async function updateLaterOutcome(db: Db, later: LaterOutcome): Promise<void> {
  const { kind, stage, code } = later.outcome;
  const { decision } = later;
  await db.$executeRaw`
    WITH call AS (
      UPDATE "ToolCall" SET "kind" = ${kind}, "stage" = ${stage}, "code" = ${code}, "outcome" = ${JSON.stringify(later.outcome)}::jsonb, "updatedAt" = now()
      WHERE "id" = ${later.callId}::text OR "approvalId" = ${later.approvalId}::text
      RETURNING "id", "tenantId", "conversationId", "toolName", "orderId"
    ), approval AS (
      UPDATE "ApprovalRequest" SET "resultCode" = ${code} WHERE "id" = ${later.approvalId}::text AND "status" = 'approved'
    ), logged AS (
      INSERT INTO "DecisionLog" ("tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "actorId", "latencyMs", "detail")
      SELECT call."tenantId", call."conversationId", call."id", call."toolName", call."orderId", ${kind}, ${stage}, ${code},
             ${decision?.actorId ?? null}::text, ${decision?.latencyMs ?? 0}::int,
             ${decision?.detail ? JSON.stringify(decision.detail) : null}::jsonb
      FROM call WHERE ${decision !== null}::boolean
    )
    SELECT pg_notify(${CALLS_CHANNEL}, changed."conversationId") FROM (SELECT DISTINCT "conversationId" FROM call) AS changed
    WHERE ${watched(Prisma.raw(`changed."conversationId"`))}`;
}

/** What the policy rules read beyond the order's facts: the customer's flag and ages, and the agent's refunds today. */
export interface RuleFactsRow {
  fraudWatch: boolean;
  customerAgeDays: number;
  orderAgeDays: number;
  agentRefundsToday: number;
}

/** The agent's refunds today are counted up to this many: a busy tenant's day is never scanned whole for one call. */
export const REFUNDS_TODAY_CAP = 100;

/** Counts the agent's refunds since midnight UTC only when `countRefunds` (the one part that is not a key lookup). */
export async function findRuleFacts(
  db: Db,
  at: { tenantId: string; orderId: string; agentId: string; countRefunds: boolean },
): Promise<RuleFactsRow | undefined> {
  const [row] = await db.$queryRaw<RuleFactsRow[]>`
    SELECT cu."fraudWatch",
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
           ) ELSE 0 END AS "agentRefundsToday"
    FROM "Order" o JOIN "Customer" cu ON cu."id" = o."customerId"
    WHERE o."id" = ${at.orderId} AND o."tenantId" = ${at.tenantId}`;
  return row;
}

/** The text of a published rule set of the tenant (versions are never edited). */
export async function findRuleSetText(db: Db, tenantId: string, id: string): Promise<string | undefined> {
  const [row] = await db.$queryRaw<{ text: string }[]>`
    SELECT "text" FROM "PolicyRuleSet" WHERE "id" = ${id} AND "tenantId" = ${tenantId}`;
  return row?.text;
}
