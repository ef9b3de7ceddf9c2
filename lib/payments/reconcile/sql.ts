import type { Client, Db, Tx } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import { UNSETTLED_STATUSES } from "../sql";

/** The refund `where` names (scoped to a tenant when one is given): its conversation, key and status, or null. */
export async function findRefundToSettle(
  db: Client,
  where: { id: string; tenantId?: string },
): Promise<{ conversationId: string; providerKey: string; status: string } | null> {
  const refund = await db.refund.findFirst({
    where,
    select: { providerKey: true, status: true, toolCall: { select: { conversationId: true } } },
  });
  return (
    refund && { conversationId: refund.toolCall.conversationId, providerKey: refund.providerKey, status: refund.status }
  );
}

/**
 * The arguments the call's refund was reserved with, as JSON: what its supervisor approved when one did (a narrowed
 * amount is what was reserved and what a re-send sends), else the call's own; null when there are none or it is gone.
 */
export async function findExecutedArgs(tx: Tx, callId: string): Promise<string | null> {
  const [call] = await tx.$queryRaw<{ args: string | null }[]>`
    SELECT coalesce(a."approvedArgs"::text, c."argsCanonical") AS "args"
    FROM "ToolCall" c LEFT JOIN "ApprovalRequest" a ON a."id" = c."approvalId"
    WHERE c."id" = ${callId}`;
  return call?.args ?? null;
}

/** Whether the approval is approved and not yet expired (false when it is gone). */
export async function isApprovalValid(tx: Tx, approvalId: string): Promise<boolean> {
  const [approval] = await tx.$queryRaw<{ valid: boolean }[]>`
    SELECT "status" = 'approved' AND "expiresAt" > now() AS "valid" FROM "ApprovalRequest" WHERE "id" = ${approvalId}`;
  return approval?.valid ?? false;
}

export async function markRefundResent(tx: Tx, refundId: string): Promise<void> {
  await tx.$executeRaw`UPDATE "Refund" SET "resentAt" = now(), "updatedAt" = now() WHERE "id" = ${refundId}`;
}

/** A refund claimed by one reconciler until its lease ends. */
export interface ClaimedRefund {
  id: string;
  providerKey: string;
  status: string;
  createdAt: Date;
  checks: number;
  /** Set on a released refund still watched (`released` status). */
  watchUntil: Date | null;
  /** On a watched refund, the provider's reference an earlier look found while its order had a refund unsettled. */
  providerRefundId: string | null;
}

/** Unsettled, or released and still watched: the refunds reconciliation looks up. */
const TO_LOOK_UP = Prisma.sql`("status" IN ${UNSETTLED_STATUSES} OR "watchUntil" IS NOT NULL)`;

/**
 * Claims the refund to look up whose turn it is (the one waiting longest for its next check, old enough and not in
 * `skip`), so that no other reconciler touches it until the lease ends; returns it, or null when none is due.
 */
export async function claimNextRefund(
  db: Db,
  options: { tenantId?: string; minAgeMs: number; leaseMs: number; skip: string[] },
): Promise<ClaimedRefund | null> {
  const [claimed] = await db.$queryRaw<ClaimedRefund[]>`
    UPDATE "Refund" SET "nextCheckAt" = now() + ${options.leaseMs}::int * interval '1 millisecond', "checks" = "checks" + 1
    WHERE "id" = (
      SELECT "id" FROM "Refund"
      WHERE ${TO_LOOK_UP} AND "nextCheckAt" <= now()
        AND "updatedAt" <= now() - ${options.minAgeMs}::int * interval '1 millisecond'
        AND (${options.tenantId ?? null}::text IS NULL OR "tenantId" = ${options.tenantId ?? null}::text)
        AND NOT ("id" = ANY(${options.skip}::text[]))
      ORDER BY "nextCheckAt", "id" LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING "id", "providerKey", "status", "createdAt", "checks", "watchUntil", "providerRefundId"`;
  return claimed ?? null;
}

/**
 * Puts the refund's next check `delayMs` from now, if it is still to be looked up; a watched refund's no later than
 * its watch's end, so its last look comes while the provider still keeps its key.
 */
export async function deferRefundCheck(db: Db, refundId: string, delayMs: number): Promise<void> {
  await db.$executeRaw`
    UPDATE "Refund" SET "nextCheckAt" = CASE
        WHEN "status" = 'released' AND "watchUntil" > now()
          THEN LEAST(now() + ${delayMs}::float8 * interval '1 millisecond', "watchUntil")
        ELSE now() + ${delayMs}::float8 * interval '1 millisecond' END
    WHERE "id" = ${refundId} AND ${TO_LOOK_UP}`;
}

/** Records whether the provider answered the probe, and when it last did. */
export async function upsertProviderStatus(db: Db, ok: boolean, reason: string | null): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ReconcileStatus" ("id", "ok", "reason", "checkedAt", "lastOkAt")
    VALUES ('provider', ${ok}, ${reason}, now(), CASE WHEN ${ok} THEN now() END)
    ON CONFLICT ("id") DO UPDATE SET "ok" = EXCLUDED."ok", "reason" = EXCLUDED."reason", "checkedAt" = EXCLUDED."checkedAt",
      "lastOkAt" = COALESCE(EXCLUDED."lastOkAt", "ReconcileStatus"."lastOkAt")`;
}

/** What the last probe of the provider found, or null before the first. */
export function findProviderStatus(db: Client) {
  return db.reconcileStatus.findUnique({
    where: { id: "provider" },
    select: { ok: true, reason: true, checkedAt: true, lastOkAt: true },
  });
}

/** The tenant's refunds under investigation, oldest first. */
export function findRefundsToInvestigate(db: Client, tenantId: string) {
  return db.refund.findMany({
    where: { tenantId, status: "investigate" },
    orderBy: { createdAt: "asc" },
    select: {
      id: true,
      orderId: true,
      amountCents: true,
      currency: true,
      providerKey: true,
      lastError: true,
      attempts: true,
      createdAt: true,
      toolCallId: true,
    },
  });
}

/** The tenant's refunds paid past their order's total and not yet closed, oldest first. */
export function findOverpaidRefunds(db: Client, tenantId: string) {
  return db.refund.findMany({
    where: { tenantId, overpaidAt: { not: null }, overpaidClosedAt: null },
    orderBy: { overpaidAt: "asc" },
    select: {
      id: true,
      orderId: true,
      amountCents: true,
      currency: true,
      providerRefundId: true,
      overpaidCents: true,
      overpaidAt: true,
      createdAt: true,
    },
  });
}

/**
 * The tenant's refund paid past its order's total and still open, locked until the transaction ends; null when there
 * is no such refund open in the tenant.
 */
export async function lockOpenOverpaidRefund(
  tx: Tx,
  at: { refundId: string; tenantId: string },
): Promise<{ orderId: string; amountCents: number; overpaidCents: number; providerRefundId: string } | null> {
  const [open] = await tx.$queryRaw<
    { orderId: string; amountCents: number; overpaidCents: number; providerRefundId: string }[]
  >`
    SELECT "orderId", "amountCents", "overpaidCents", "providerRefundId" FROM "Refund"
    WHERE "id" = ${at.refundId} AND "tenantId" = ${at.tenantId} AND "overpaidAt" IS NOT NULL AND "overpaidClosedAt" IS NULL
    FOR UPDATE`;
  return open ?? null;
}

/** Closes a refund paid past its order's total, by the supervisor. */
export async function closeOverpaidRefund(tx: Tx, at: { refundId: string; userId: string }): Promise<void> {
  await tx.$executeRaw`
    UPDATE "Refund" SET "overpaidClosedAt" = now(), "overpaidClosedById" = ${at.userId}, "updatedAt" = now()
    WHERE "id" = ${at.refundId}`;
}
