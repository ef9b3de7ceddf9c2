import type { Db, Tx } from "../db";
import { Prisma } from "../generated/prisma/client";
import type { Outcome } from "../outcome";
import type { EarlierEffect } from "../tools/types";

// The payments module's statements: refunds, their reconciliation and the provider's reachability.

/** The statement that inserts the refund reserved by a call, once for each row of `moved` (the call's order move). */
export function insertReservedRefund(refund: {
  id: string;
  tenantId: string;
  orderId: string;
  toolCallId: string;
  amountCents: number;
  currency: string;
  reason: string;
  providerKey: string;
  agentId: string;
  customerId: string;
}): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "Refund" ("id", "tenantId", "orderId", "toolCallId", "amountCents", "currency", "reason", "status", "providerKey", "agentId", "customerId")
    SELECT ${refund.id}, ${refund.tenantId}, ${refund.orderId}, ${refund.toolCallId}, ${refund.amountCents}::int, ${refund.currency}, ${refund.reason}, 'reserved',
           ${refund.providerKey}, ${refund.agentId}, ${refund.customerId}
    FROM moved`;
}

/** A refund as its provider call needs it, with the conversation of the call that reserved it. */
export interface StoredRefund {
  id: string;
  status: string;
  providerKey: string;
  orderId: string;
  amountCents: number;
  currency: string;
  reason: string;
  toolCallId: string;
  conversationId: string;
}

async function storedRefundWhere(db: Db, where: Prisma.Sql): Promise<StoredRefund | null> {
  const [refund] = await db.$queryRaw<StoredRefund[]>`
    SELECT r."id", r."status", r."providerKey", r."orderId", r."amountCents", r."currency", r."reason", r."toolCallId", c."conversationId"
    FROM "Refund" r JOIN "ToolCall" c ON c."id" = r."toolCallId" WHERE ${where}`;
  return refund ?? null;
}

export function findStoredRefund(db: Db, refundId: string): Promise<StoredRefund | null> {
  return storedRefundWhere(db, Prisma.sql`r."id" = ${refundId}`);
}

export function findStoredRefundOfCall(db: Db, callId: string): Promise<StoredRefund | null> {
  return storedRefundWhere(db, Prisma.sql`r."toolCallId" = ${callId}`);
}

/** A refund's statuses while the provider's answer is unsettled: it keeps its order blocked. Written as literals. */
export const UNSETTLED_STATUSES = Prisma.raw(`('reserved', 'unknown', 'investigate')`);

/**
 * Whether a late refund of the order, other than `except`, waits to be counted (decision 031): released, found made at
 * the provider, while another refund of the order was unsettled. The order stays blocked until it is counted,
 * whatever settles first.
 */
const lateRefundWaits = (order: string | Prisma.Sql, except?: string) => Prisma.sql`EXISTS (
      SELECT 1 FROM "Refund" w
      WHERE w."orderId" = ${order} AND w."status" = 'released' AND w."providerRefundId" IS NOT NULL AND w."watchUntil" IS NOT NULL${
        except === undefined ? Prisma.empty : Prisma.sql` AND w."id" <> ${except}`
      })`;

/**
 * For `recordLaterOutcomeWith`: the refund the call `callId` reserved marked issued under the provider's reference, only
 * while it is still reserved (the first answer for its key), and its order unblocked; `final` is `issued` (the call's
 * outcome) with the refund's id and the order's refunded total filled in.
 */
export function issueReservedOfCall(callId: string, providerRefundId: string, issued: Outcome): Prisma.Sql {
  return Prisma.sql`settled AS (
      UPDATE "Refund" SET "status" = 'issued', "providerRefundId" = ${providerRefundId}, "settledAt" = now(), "updatedAt" = now(),
        "attempts" = "attempts" + 1
      WHERE "toolCallId" = ${callId} AND "status" = 'reserved'
      RETURNING "id", "orderId"
    ), unblocked AS (
      UPDATE "Order" o SET "refundPending" = ${lateRefundWaits(Prisma.sql`o."id"`)}, "version" = o."version" + 1, "updatedAt" = now()
      FROM settled WHERE o."id" = settled."orderId"
      RETURNING o."refundedCents"
    ), final AS (
      SELECT jsonb_set(jsonb_set(${JSON.stringify(issued)}::jsonb, '{result,refund_id}', to_jsonb(settled."id")),
                       '{result,refunded_cents}', to_jsonb(unblocked."refundedCents")) AS "outcome"
      FROM settled, unblocked
    )`;
}

export async function findCallOutcome(db: Db, callId: string): Promise<Outcome> {
  const [call] = await db.$queryRaw<{ outcome: Outcome }[]>`SELECT "outcome" FROM "ToolCall" WHERE "id" = ${callId}`;
  return call.outcome;
}

/** A refund locked for settling, with what its call and conversation say about it. */
export interface LockedRefund {
  id: string;
  status: string;
  orderId: string;
  amountCents: number;
  currency: string;
  toolCallId: string;
  tenantId: string;
  conversationId: string;
  approvalId: string | null;
  createdAt: Date;
}

/** Locks the refund row until the transaction ends and returns it, or null when there is none. */
export async function lockRefundRow(tx: Tx, refundId: string): Promise<LockedRefund | null> {
  const [refund] = await tx.$queryRaw<LockedRefund[]>`
    SELECT r."id", r."status", r."orderId", r."amountCents", r."currency", r."toolCallId", r."tenantId", c."conversationId", c."approvalId", r."createdAt"
    FROM "Refund" r JOIN "ToolCall" c ON c."id" = r."toolCallId" WHERE r."id" = ${refundId} FOR UPDATE OF r`;
  return refund ?? null;
}

/** Marks the refund issued under the provider's reference and unblocks its order; returns the order's refunded total. */
export async function markRefundIssued(
  tx: Tx,
  refund: LockedRefund,
  providerRefundId: string,
  actorId: string | null,
): Promise<number> {
  const [order] = await tx.$queryRaw<{ refundedCents: number }[]>`
    WITH settled AS (
      UPDATE "Refund" SET "status" = 'issued', "providerRefundId" = ${providerRefundId}, "resolvedById" = ${actorId}, "settledAt" = now(), "updatedAt" = now(),
        "attempts" = "attempts" + 1
      WHERE "id" = ${refund.id}
    )
    UPDATE "Order" SET "refundPending" = ${lateRefundWaits(refund.orderId)}, "version" = "version" + 1, "updatedAt" = now()
    WHERE "id" = ${refund.orderId}
    RETURNING "refundedCents"`;
  return order.refundedCents;
}

/**
 * Marks the refund released with the reason, gives its amount back to the order's refundable balance and to the
 * conversation's budget, and unblocks the order. `watchUntil`, when later than now, keeps reconciliation looking
 * the refund up until then, from its next pass on.
 */
export async function markRefundReleased(
  tx: Tx,
  refund: LockedRefund,
  reason: string,
  actorId: string | null,
  watchUntil: Date | null,
): Promise<void> {
  await tx.$executeRaw`
    WITH released AS (
      UPDATE "Refund" SET "status" = 'released', "lastError" = ${reason}, "resolvedById" = ${actorId}, "settledAt" = now(), "updatedAt" = now(),
        "attempts" = "attempts" + 1,
        "watchUntil" = CASE WHEN ${watchUntil}::timestamptz > now() THEN ${watchUntil}::timestamptz END,
        "nextCheckAt" = now()
      WHERE "id" = ${refund.id}
    ), budget AS (
      UPDATE "Conversation" SET "irreversibleCents" = GREATEST(0, "irreversibleCents" - ${refund.amountCents}::int) WHERE "id" = ${refund.conversationId}
    )
    UPDATE "Order" SET "refundedCents" = "refundedCents" - ${refund.amountCents}::int, "refundPending" = ${lateRefundWaits(refund.orderId)},
      "version" = "version" + 1, "updatedAt" = now()
    WHERE "id" = ${refund.orderId}`;
}

/**
 * A released refund the provider made after all, issued under its reference. Issued, its amount is counted on the
 * conversation's budget and on the order, whose refunded total goes no higher than the order's total: what the
 * provider paid beyond it is kept as `overpaidCents` (and `overpaidAt`), which lists the refund for the tenant's
 * supervisors. Only when it does not fit beside another refund of the order still unsettled (whose reservation may
 * yet be given back) does it wait: the reference is kept on the row, it stays watched and due, and the order stays
 * blocked until it is counted. Returns what happened; null when the refund is not released.
 */
export async function markReleasedRefundIssued(
  tx: Tx,
  refund: LockedRefund,
  providerRefundId: string,
): Promise<{ waiting: true } | { waiting: false; refundedCents: number; overpaidCents: number } | null> {
  const [order] = await tx.$queryRaw<{ fits: boolean; otherUnsettled: boolean }[]>`
    SELECT o."refundedCents" + ${refund.amountCents}::int <= o."totalCents" AS "fits",
           EXISTS (SELECT 1 FROM "Refund" r WHERE r."orderId" = o."id" AND r."status" IN ${UNSETTLED_STATUSES}) AS "otherUnsettled"
    FROM "Order" o WHERE o."id" = ${refund.orderId} FOR UPDATE OF o`;
  if (order.otherUnsettled && !order.fits) {
    const [kept] = await tx.$queryRaw<{ id: string }[]>`
      WITH kept AS (
        UPDATE "Refund" SET "providerRefundId" = ${providerRefundId}, "updatedAt" = now(), "nextCheckAt" = now(),
          "watchUntil" = GREATEST(COALESCE("watchUntil", now()), now() + interval '1 hour')
        WHERE "id" = ${refund.id} AND "status" = 'released'
        RETURNING "id"
      ), blocked AS (
        UPDATE "Order" SET "refundPending" = true WHERE "id" = ${refund.orderId} AND EXISTS (SELECT 1 FROM kept)
      )
      SELECT "id" FROM kept`;
    return kept ? { waiting: true } : null;
  }
  const [issued] = await tx.$queryRaw<{ refundedCents: number; overpaidCents: number }[]>`
    WITH before AS (
      SELECT GREATEST(0, "refundedCents" + ${refund.amountCents}::int - "totalCents") AS "overpaidCents"
      FROM "Order" WHERE "id" = ${refund.orderId}
    ), issued AS (
      UPDATE "Refund" SET "status" = 'issued', "providerRefundId" = ${providerRefundId}, "watchUntil" = NULL, "settledAt" = now(), "updatedAt" = now(),
        "lastError" = 'made by the provider after it was released here (' || coalesce("lastError", 'no reason') || ')',
        "overpaidCents" = NULLIF((SELECT "overpaidCents" FROM before), 0),
        "overpaidAt" = CASE WHEN (SELECT "overpaidCents" FROM before) > 0 THEN now() END
      WHERE "id" = ${refund.id} AND "status" = 'released'
      RETURNING "id"
    ), budget AS (
      UPDATE "Conversation" SET "irreversibleCents" = "irreversibleCents" + ${refund.amountCents}::int
      WHERE "id" = ${refund.conversationId} AND EXISTS (SELECT 1 FROM issued)
    )
    UPDATE "Order" o SET "refundedCents" = LEAST(o."totalCents", o."refundedCents" + ${refund.amountCents}::int),
      "refundPending" = EXISTS (SELECT 1 FROM "Refund" r WHERE r."orderId" = o."id" AND r."status" IN ${UNSETTLED_STATUSES})
        OR ${lateRefundWaits(Prisma.sql`o."id"`, refund.id)},
      "version" = o."version" + 1, "updatedAt" = now()
    WHERE o."id" = ${refund.orderId} AND EXISTS (SELECT 1 FROM issued)
    RETURNING o."refundedCents", (SELECT "overpaidCents" FROM before)`;
  return issued ? { waiting: false, ...issued } : null;
}

/** Whether a late refund of the order waits to be counted: no other refund of it may be sent meanwhile. */
export async function hasLateRefundWaiting(tx: Tx, orderId: string): Promise<boolean> {
  const [row] = await tx.$queryRaw<{ waits: boolean }[]>`SELECT ${lateRefundWaits(orderId)} AS "waits"`;
  return row.waits;
}

/** Ends a released refund's watch, unless the provider was found to have made it (then it waits to be counted). */
export async function endRefundWatch(db: Db, refundId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "Refund" SET "watchUntil" = NULL, "updatedAt" = now()
    WHERE "id" = ${refundId} AND "status" = 'released' AND "watchUntil" IS NOT NULL AND "providerRefundId" IS NULL`;
}

/** Leaves the refund unsettled (`unknown` or `investigate`) with the reason, counting the attempt. */
export async function markRefundUnsettled(tx: Tx, refundId: string, status: string, reason: string): Promise<void> {
  await tx.$executeRaw`
    UPDATE "Refund" SET "status" = ${status}, "lastError" = ${reason}, "updatedAt" = now(), "attempts" = "attempts" + 1 WHERE "id" = ${refundId}`;
}

// A refund as the duplicate-intent guard sees it: reserved is in progress, unknown and investigate are unknown.
const REFUND_EFFECT = Prisma.sql`r."toolCallId" AS "callId", c."conversationId", r."amountCents", r."currency",
           r."createdAt" AS "at",
           CASE r."status" WHEN 'issued' THEN 'issued' WHEN 'reserved' THEN 'in_progress' ELSE 'unknown' END AS "status"`;

/**
 * For the statement that reads a call's facts (the order as `o`): the JSON array of the order's refunds issued, unknown
 * or in progress created within the last `hours`, newest first, as `EarlierEffect`s.
 */
export function recentRefunds(hours: number): Prisma.Sql {
  return Prisma.sql`(
      SELECT COALESCE(json_agg(json_build_object(
               'callId', r."toolCallId", 'conversationId', c."conversationId", 'amountCents', r."amountCents",
               'currency', r."currency", 'at', r."createdAt",
               'status', CASE r."status" WHEN 'issued' THEN 'issued' WHEN 'reserved' THEN 'in_progress' ELSE 'unknown' END
             ) ORDER BY r."createdAt" DESC, r."id" DESC), '[]'::json)
      FROM "Refund" r JOIN "ToolCall" c ON c."id" = r."toolCallId"
      WHERE r."orderId" = o."id" AND r."status" IN ('issued', 'reserved', 'unknown', 'investigate')
        AND r."createdAt" > now() - make_interval(hours => ${hours}::int))`;
}

/** The order's refund still awaiting the provider's answer, if any (at most one: it blocks new refunds). */
export async function findUnsettledRefund(db: Db, orderId: string): Promise<EarlierEffect | null> {
  const [refund] = await db.$queryRaw<EarlierEffect[]>`
    SELECT ${REFUND_EFFECT} FROM "Refund" r JOIN "ToolCall" c ON c."id" = r."toolCallId"
    WHERE r."orderId" = ${orderId} AND r."status" IN ${UNSETTLED_STATUSES}
    ORDER BY r."createdAt" DESC, r."id" DESC LIMIT 1`;
  return refund ?? null;
}
