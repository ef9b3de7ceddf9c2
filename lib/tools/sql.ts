import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import type { Outcome } from "../outcome";
import type { EarlierEffect, OrderChange } from "./types";

/**
 * The one list of the order's columns as a call sees them (`OrderFacts`), for a statement that reads the order as
 * `o` joined to its customer as `cu`.
 */
export const ORDER_FACTS = Prisma.sql`o."id", o."tenantId", o."customerId", cu."email" AS "customerEmail", o."totalCents", o."refundedCents", o."currency",
           o."status", o."addressLine1", o."postalCode", o."fraudHold", o."refundPending", o."version"`;

/**
 * The statement (for a `WITH moved AS (...)`) that applies `change` to the order and moves its version, only at
 * the version the checks saw; it returns the order's id when it moved and no row when the order had moved on.
 */
export function moveOrderAtVersion(order: { id: string; version: number }, change: OrderChange): Prisma.Sql {
  return Prisma.sql`
        UPDATE "Order" SET
          "refundedCents" = "refundedCents" + ${change.refundedCentsIncrement ?? 0}::int,
          "refundPending" = COALESCE(${change.refundPending ?? null}::boolean, "refundPending"),
          "addressLine1" = COALESCE(${change.addressLine1 ?? null}::text, "addressLine1"),
          "postalCode" = COALESCE(${change.postalCode ?? null}::text, "postalCode"),
          "version" = "version" + 1, "updatedAt" = now()
        WHERE "id" = ${order.id} AND "version" = ${order.version}
        RETURNING "id"`;
}

/** A tool's write reads its order's move as `moved`, and writes once for its one row (`ToolEffect`). */
export const MOVED = Prisma.sql`, moved`;

/** The statement that records one change of an order's shipping address, from the address the call saw to the new one. */
export function insertAddressChange(change: {
  id: string;
  orderId: string;
  toolCallId: string;
  from: AddressLine;
  to: AddressLine;
}): Prisma.Sql {
  return Prisma.sql`
      INSERT INTO "AddressChange" ("id", "orderId", "toolCallId", "fromLine1", "fromPostalCode", "toLine1", "toPostalCode")
      SELECT ${change.id}, ${change.orderId}, ${change.toolCallId}, ${change.from.line1}, ${change.from.postalCode}, ${change.to.line1}, ${change.to.postalCode}
      FROM moved`;
}

interface AddressLine {
  line1: string;
  postalCode: string;
}

/** A call as `get_call_status` reads it: its stored outcome and, while its approval waits, when that lapses. */
export interface ConversationCall {
  id: string;
  outcome: Outcome;
  /** Its approval is still pending but past its expiry (not yet recorded as expired). */
  lapsed: boolean;
  lapsesAt: Date | null;
}

export async function findConversationCall(
  db: Db,
  callId: string,
  conversationId: string,
): Promise<ConversationCall | null> {
  const [call] = await db.$queryRaw<ConversationCall[]>`
        SELECT c."id", c."outcome", (a."status" = 'pending' AND a."expiresAt" <= now()) IS TRUE AS "lapsed",
               CASE WHEN a."status" = 'pending' THEN a."expiresAt" END AS "lapsesAt"
        FROM "ToolCall" c LEFT JOIN "ApprovalRequest" a ON a."id" = c."approvalId"
        WHERE c."id" = ${callId} AND c."conversationId" = ${conversationId}`;
  return call ?? null;
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
    WHERE r."orderId" = ${orderId} AND r."status" IN ('reserved', 'unknown', 'investigate')
    ORDER BY r."createdAt" DESC, r."id" DESC LIMIT 1`;
  return refund ?? null;
}
