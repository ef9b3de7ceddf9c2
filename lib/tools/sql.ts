import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import type { Outcome } from "../outcome";
import type { OrderChange } from "./types";

/**
 * The one list of the order's columns as a call sees them (`OrderFacts`), for a statement that reads the order as
 * `o` joined to its customer as `cu`.
 */
export const ORDER_FACTS = Prisma.sql`o."id", o."tenantId", o."customerId", cu."email" AS "customerEmail", o."totalCents", o."refundedCents", o."currency",
           o."status", o."addressLine1", o."postalCode", o."fraudHold", o."refundPending", o."version"`;

/**
 * The order with this id as `o`, for a FROM clause whose WHERE then checks its tenant and customer. The fence
 * (`OFFSET 0`) keeps the lookup on the primary key: left to choose, the planner may take the (tenant, customer)
 * index and read every order of the customer to find one.
 */
export const orderById = (orderId: string) => Prisma.sql`(SELECT * FROM "Order" WHERE "id" = ${orderId} OFFSET 0) o`;

/**
 * The statement (for a `WITH moved AS (...)`) that applies `change` to the order and moves its version, only at
 * the version the checks saw (and when `onlyIf`, an `AND` condition, holds); it returns the order's id when it moved
 * and no row when the order had moved on.
 */
export function moveOrderAtVersion(
  order: { id: string; version: number },
  change: OrderChange,
  onlyIf: Prisma.Sql = Prisma.empty,
): Prisma.Sql {
  return Prisma.sql`
        UPDATE "Order" SET
          "refundedCents" = "refundedCents" + ${change.refundedCentsIncrement ?? 0}::int,
          "refundPending" = COALESCE(${change.refundPending ?? null}::boolean, "refundPending"),
          "addressLine1" = COALESCE(${change.addressLine1 ?? null}::text, "addressLine1"),
          "postalCode" = COALESCE(${change.postalCode ?? null}::text, "postalCode"),
          "version" = "version" + 1, "updatedAt" = now()
        WHERE "id" = ${order.id} AND "version" = ${order.version} ${onlyIf}
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

/** The conversation's call with this id, only when it is a call of one of the `callable` tools; else null. */
export async function findConversationCall(
  db: Db,
  callId: string,
  conversationId: string,
  callable: readonly string[],
): Promise<ConversationCall | null> {
  const [call] = await db.$queryRaw<ConversationCall[]>`
        SELECT c."id", c."outcome", (a."status" = 'pending' AND a."expiresAt" <= now()) IS TRUE AS "lapsed",
               CASE WHEN a."status" = 'pending' THEN a."expiresAt" END AS "lapsesAt"
        FROM "ToolCall" c LEFT JOIN "ApprovalRequest" a ON a."id" = c."approvalId"
        WHERE c."id" = ${callId} AND c."conversationId" = ${conversationId} AND c."toolName" = ANY(${callable}::text[])`;
  return call ?? null;
}
