import { transaction } from "../../db";
import { queueMessages } from "../../db/outbox";
import { requestPhrase } from "../words";
import { findAdminEmails, markExpiryWarned } from "./sql";

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
