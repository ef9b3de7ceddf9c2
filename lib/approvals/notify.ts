import type { Sql } from "../db";
import { queueMessages, type QueuedMessage } from "../mail/queue";
import { formatMoney } from "../money";
import type { ApprovalPreview } from "../gateway/approval";

/**
 * Tells the tenant's supervisors that a request is waiting, through the outbox in the same transaction that
 * opened it: an email to each, and the tenant's webhook when one is configured. The text is built from the
 * host's preview (tool, amount, order, expiry), never from anything the model wrote.
 */
export async function notifyApprovalRequested(client: Sql, approval: { id: string; tenantId: string; expiresAt: Date; preview: ApprovalPreview }): Promise<void> {
  const { preview } = approval;
  const amount = formatMoney(preview.impact.amount_cents, preview.impact.currency);
  const [tenant] = await client.$queryRaw<{ webhookUrl: string | null; supervisors: string[] }[]>`
    SELECT t."webhookUrl",
           ARRAY(SELECT u."email" FROM "User" u WHERE u."tenantId" = t."id" AND u."role" = 'SUPERVISOR' AND u."active" ORDER BY u."email") AS "supervisors"
    FROM "Tenant" t WHERE t."id" = ${approval.tenantId}`;
  if (!tenant) throw new Error(`tenant ${approval.tenantId} vanished during a call`);
  const subject = `Approval needed: ${preview.tool} ${amount} on ${preview.order.order_id}`;
  const body = [
    `A call is waiting for your approval.`,
    ``,
    `Tool: ${preview.tool}`,
    `Amount: ${amount}`,
    `Order: ${preview.order.order_id} (${preview.order.status}, refundable ${formatMoney(preview.order.refundable_cents, preview.order.currency)})`,
    `Expires: ${approval.expiresAt.toISOString()}`,
    `Request: ${approval.id}`,
    ``,
    `Review it in toolgate under Approvals.`,
  ].join("\n");
  const messages: QueuedMessage[] = tenant.supervisors.map((email) => ({ kind: "approval_email", recipient: email, subject, body }));
  if (tenant.webhookUrl) {
    messages.push({
      kind: "webhook",
      recipient: tenant.webhookUrl,
      subject: "approval.requested",
      body: JSON.stringify({
        type: "approval.requested",
        approval_id: approval.id,
        tool: preview.tool,
        order_id: preview.order.order_id,
        amount_cents: preview.impact.amount_cents,
        currency: preview.impact.currency,
        expires_at: approval.expiresAt.toISOString(),
      }),
    });
  }
  await queueMessages(client, { tenantId: approval.tenantId, orderId: preview.order.order_id, toolCallId: null }, messages);
}
