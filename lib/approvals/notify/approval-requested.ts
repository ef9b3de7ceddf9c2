import type { Db } from "../../db";
import { queueMessages } from "../../db/outbox";
import { formatMoney } from "../../money";
import type { ApprovalPreview } from "../../gateway";
import { utcWords } from "../../words";
import { createApprovalLinks } from "../email-links/create";
import { heldText, requestPhrase } from "../words";
import { announceInChat, updateInChat } from "./chat";
import { requestedMessages } from "./messages";
import { findRequestAudience } from "./sql";

/**
 * Tells the tenant's supervisors that a request is waiting, through the outbox in the same transaction that
 * opened it: an email to each, the tenant's webhook when one is configured, and its Slack and Teams (./chat.ts).
 * The text is built from the host's preview (tool, amount, order, expiry), never from anything the model wrote.
 * Each email carries that supervisor's own single-use link to the request (lib/approvals/email-links/). The expired
 * request it replaces, if any, is closed in chat too.
 */
export async function notifyApprovalRequested(
  client: Db,
  approval: { id: string; tenantId: string; expiresAt: Date; preview: ApprovalPreview; expiredId: string | null },
): Promise<void> {
  const { preview } = approval;
  const amount = formatMoney(preview.impact.amount_cents, preview.impact.currency);
  const tenant = await findRequestAudience(client, approval.tenantId, preview.customer_id);
  if (!tenant) throw new Error(`tenant ${approval.tenantId} vanished during a call`);
  const what = requestPhrase({
    toolName: preview.tool,
    orderId: preview.order.order_id,
    amountCents: preview.impact.amount_cents,
    currency: preview.impact.currency,
  });
  const subject = `Approval needed: ${what}`;
  const links = await createApprovalLinks(
    client,
    approval,
    tenant.supervisors.map((supervisor) => supervisor.id),
  );
  const body = (link: string) =>
    [
      `An agent's call waits for your approval: ${what}${tenant.customerEmail ? ` for ${tenant.customerEmail}` : ""}.`,
      ``,
      ...preview.held.map((reason) => `Held because ${heldText(reason, preview.impact.currency)}.`),
      `Amount: ${amount}`,
      `Order: ${preview.order.order_id}, ${preview.order.status}, ${formatMoney(preview.order.refundable_cents, preview.order.currency)} still refundable`,
      `Decide before: ${utcWords(approval.expiresAt)} (${approval.expiresAt.toISOString()})`,
      `Request: ${approval.id}`,
      ``,
      `Review and decide (sign-in required; this link works once, until the request expires):`,
      link,
      ``,
      `Or open toolgate under Approvals.`,
    ].join("\n");
  const messages = requestedMessages(
    tenant,
    approval,
    { subject, bodyFor: (supervisorId) => body(links.get(supervisorId) ?? "") },
    {
      tool: preview.tool,
      order_id: preview.order.order_id,
      amount_cents: preview.impact.amount_cents,
      currency: preview.impact.currency,
    },
  );
  await queueMessages(
    client,
    { tenantId: approval.tenantId, orderId: preview.order.order_id, toolCallId: null },
    messages,
  );
  if (approval.expiredId) await updateInChat(client, approval.expiredId, { kind: "expired" });
  await announceInChat(client, approval);
}
