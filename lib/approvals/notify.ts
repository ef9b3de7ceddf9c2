import type { Tx } from "../db";
import { newId } from "../ids";
import { formatMoney } from "../money";
import type { ApprovalPreview } from "../gateway/approval";

/**
 * Tells the tenant's supervisors that a request is waiting, through the outbox in the same transaction that
 * opened it: an email to each, and the tenant's webhook when one is configured. The text is built from the
 * host's preview (tool, amount, order, expiry), never from anything the model wrote.
 */
export async function notifyApprovalRequested(client: Tx, approval: { id: string; tenantId: string; expiresAt: Date; preview: ApprovalPreview }): Promise<void> {
  const { preview } = approval;
  const amount = formatMoney(preview.impact.amount_cents, preview.impact.currency);
  const [supervisors, tenant] = await Promise.all([
    client.user.findMany({ where: { tenantId: approval.tenantId, role: "SUPERVISOR", active: true }, select: { email: true } }),
    client.tenant.findUniqueOrThrow({ where: { id: approval.tenantId }, select: { webhookUrl: true } }),
  ]);
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
  const rows = supervisors.map((supervisor) => ({
    id: newId("msg"),
    tenantId: approval.tenantId,
    orderId: preview.order.order_id,
    kind: "approval_email",
    recipient: supervisor.email,
    subject,
    body,
  }));
  if (tenant.webhookUrl) {
    rows.push({
      id: newId("msg"),
      tenantId: approval.tenantId,
      orderId: preview.order.order_id,
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
  if (rows.length > 0) await client.outboxMessage.createMany({ data: rows });
}
