// The statements of expiry: finding requests past their time, and warning before it.
import type { Client, Db, Tx } from "../../db";

/** Up to 500 pending requests (of one tenant, or of all) past their expiry: their ids. */
export async function findDueRequests(db: Client, tenantId: string | undefined) {
  return db.approvalRequest.findMany({
    where: { ...(tenantId ? { tenantId } : {}), status: "pending", expiresAt: { lte: new Date() } },
    select: { id: true },
    take: 500,
  });
}

/** A request's conversation, status and expiry; null when there is none. */
export async function findExpiry(db: Client, approvalId: string) {
  return db.approvalRequest.findUnique({
    where: { id: approvalId },
    select: { conversationId: true, status: true, expiresAt: true },
  });
}

/**
 * Marks as warned (up to 200 at a time, skipping rows another instance holds) every pending, unwarned request that
 * expires within its tenant's warning time, of one tenant or of all; returns what the warning says about each.
 */
export async function markExpiryWarned(tx: Tx, tenantId: string | undefined) {
  return tx.$queryRaw<
    {
      id: string;
      tenantId: string;
      toolName: string;
      orderId: string;
      impactCents: number;
      currency: string;
      expiresAt: Date;
    }[]
  >`
    UPDATE "ApprovalRequest" r SET "expiryNotifiedAt" = now()
    FROM "Tenant" t
    WHERE t."id" = r."tenantId" AND t."expiryWarningSeconds" > 0 AND r."status" = 'pending' AND r."expiryNotifiedAt" IS NULL
      AND r."expiresAt" > now() AND r."expiresAt" <= now() + make_interval(secs => t."expiryWarningSeconds")
      AND (${tenantId ?? null}::text IS NULL OR r."tenantId" = ${tenantId ?? null}::text)
      AND r."id" IN (SELECT "id" FROM "ApprovalRequest" WHERE "status" = 'pending' AND "expiryNotifiedAt" IS NULL ORDER BY "expiresAt" LIMIT 200 FOR UPDATE SKIP LOCKED)
    RETURNING r."id", r."tenantId", r."toolName", r."orderId", r."impactCents", r."preview"->'impact'->>'currency' AS "currency", r."expiresAt"`;
}

/** The emails of the tenant's active admins, in order. */
export async function findAdminEmails(db: Db, tenantId: string): Promise<{ email: string }[]> {
  return db.$queryRaw<{ email: string }[]>`
    SELECT "email" FROM "User" WHERE "tenantId" = ${tenantId} AND "role" = 'ADMIN' AND "active" ORDER BY "email" ASC`;
}
