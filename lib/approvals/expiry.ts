import { db, transaction } from "../db";
import { expireApproval } from "../gateway/approval";
import { lockConversation } from "../gateway/lock";
import { queueMessages } from "../outbox";
import { findAdminEmails, findDueRequests, findExpiry, markExpiryWarned } from "./sql";
import { requestPhrase } from "./words";

/** Closes one request if it is past its expiry, taking locks in the order every writer uses. */
export async function expireIfDue(approvalId: string): Promise<boolean> {
  const request = await findExpiry(db, approvalId);
  if (!request || request.status !== "pending" || request.expiresAt > new Date()) return false;
  return transaction(async (tx) => {
    await lockConversation(tx, { id: request.conversationId });
    return expireApproval(tx, approvalId);
  });
}

/** Every pending request (of one tenant, or of all) past its expiry becomes expired, and so do the calls waiting on it. */
export async function expireDue(tenantId?: string): Promise<number> {
  const due = await findDueRequests(db, tenantId);
  let expired = 0;
  for (const { id } of due) if (await expireIfDue(id)) expired++;
  return expired;
}

/**
 * Warns each tenant's admins once per request when it will expire within the tenant's warning time, through the
 * outbox in the same transaction that marks it warned, so several instances never warn twice.
 */
export async function warnExpiring(tenantId?: string): Promise<number> {
  return transaction(async (tx) => {
    const due = await markExpiryWarned(tx, tenantId);
    for (const request of due) {
      const admins = await findAdminEmails(tx, request.tenantId);
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
