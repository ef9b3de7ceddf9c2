import { db } from "../db";
import { expireApproval } from "../gateway/approval";
import { lockConversation } from "../gateway/lock";
import { queueMessages } from "../outbox";
import { requestPhrase } from "./words";

/** Closes one request if it is past its expiry, taking locks in the order every writer uses. */
export async function expireIfDue(approvalId: string): Promise<boolean> {
  const request = await db.approvalRequest.findUnique({
    where: { id: approvalId },
    select: { conversationId: true, status: true, expiresAt: true },
  });
  if (!request || request.status !== "pending" || request.expiresAt > new Date()) return false;
  return db.$transaction(async (tx) => {
    await lockConversation(tx, { id: request.conversationId });
    return expireApproval(tx, approvalId);
  });
}

/** Every pending request (of one tenant, or of all) past its expiry becomes expired, and so do the calls waiting on it. */
export async function expireDue(tenantId?: string): Promise<number> {
  const due = await db.approvalRequest.findMany({
    where: { ...(tenantId ? { tenantId } : {}), status: "pending", expiresAt: { lte: new Date() } },
    select: { id: true },
    take: 500,
  });
  let expired = 0;
  for (const { id } of due) if (await expireIfDue(id)) expired++;
  return expired;
}

/**
 * Warns each tenant's admins once per request when it will expire within the tenant's warning time, through the
 * outbox in the same transaction that marks it warned, so several instances never warn twice.
 */
export async function warnExpiring(tenantId?: string): Promise<number> {
  return db.$transaction(async (tx) => {
    const due = await tx.$queryRaw<
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
    for (const request of due) {
      const admins = await tx.user.findMany({
        where: { tenantId: request.tenantId, role: "ADMIN", active: true },
        select: { email: true },
        orderBy: { email: "asc" },
      });
      const what = requestPhrase({
        toolName: request.toolName,
        orderId: request.orderId,
        amountCents: request.impactCents,
        currency: request.currency,
      });
      const subject = `Expiring soon: ${what}`;
      const body = [
        `A request nobody has decided expires at ${request.expiresAt.toISOString()}.`,
        ``,
        `Request: ${what} (${request.id})`,
        ``,
        `When it expires nothing executes and the agent is told it expired. Ask a supervisor to decide it under Approvals.`,
      ].join("\n");
      await queueMessages(
        tx,
        { tenantId: request.tenantId, orderId: request.orderId, toolCallId: null },
        admins.map((admin) => ({ kind: "approval_expiring", recipient: admin.email, subject, body })),
      );
    }
    return due.length;
  });
}
