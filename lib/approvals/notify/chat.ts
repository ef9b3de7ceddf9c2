import { providersToAnnounce, providersToUpdate, queueAnnouncement, queueUpdate } from "../../chat-notices/queue";
import type { ChatNotice, NoticeState } from "../../chat-notices/notice";
import type { Db } from "../../db";
import { env } from "../../env";
import { formatMoney } from "../../money";
import { heldText, requestPhrase } from "../words";
import { findNoticeFacts } from "./sql";

// A held call in the tenant's Slack and Teams (docs/SPEC.md, "Slack and Teams"): announced with the email when the
// request opens, and again (Slack's message updated, a Teams card following) when it is decided, passed to a second
// supervisor, expires or is withdrawn, each time in the transaction that did it. Tenants with no chat channel pay
// one indexed read.

export type ChatChange =
  { kind: "escalated" | "approved" | "denied" | "failed"; byId: string } | { kind: "expired" | "withdrawn" };

/** The request's card on the desk: sign-in first, then the queue searched for this request, scrolled to its card. */
function deskUrl(approvalId: string): string {
  const base = (env().NEXTAUTH_URL ?? "http://127.0.0.1:3000").replace(/\/+$/, "");
  return `${base}/approvals?q=${encodeURIComponent(approvalId)}#request-${encodeURIComponent(approvalId)}`;
}

async function noticeOf(
  client: Db,
  approvalId: string,
  change: ChatChange | null,
): Promise<{ notice: ChatNotice; orderId: string; tenantId: string }> {
  const byId = change && "byId" in change ? change.byId : null;
  const facts = await findNoticeFacts(client, approvalId, byId);
  if (!facts) throw new Error(`approval request ${approvalId} vanished while its chat notice was written`);
  const { preview } = facts;
  const currency = preview.impact.currency;
  const at = new Date().toISOString();
  const state: NoticeState =
    change === null
      ? { kind: "waiting", at }
      : "byId" in change
        ? { kind: change.kind, by: facts.decider ?? change.byId, at }
        : { kind: change.kind, at };
  const notice: ChatNotice = {
    approvalId,
    what: requestPhrase({
      toolName: facts.toolName,
      orderId: facts.orderId,
      amountCents: facts.impactCents,
      currency,
    }),
    agent: facts.agent ?? "an agent no longer in the tenant",
    customer: facts.customerEmail ? `${facts.customerEmail} (${preview.customer_id})` : preview.customer_id,
    amount: formatMoney(facts.impactCents, currency),
    reasons: preview.held.map((reason) => heldText(reason, currency)),
    expiresAt: facts.expiresAt.toISOString(),
    deskUrl: deskUrl(approvalId),
    state,
  };
  return { notice, orderId: facts.orderId, tenantId: facts.tenantId };
}

/** Announces a newly held call in each chat channel the tenant connected. */
export async function announceInChat(client: Db, approval: { id: string; tenantId: string }): Promise<void> {
  const providers = await providersToAnnounce(client, approval.tenantId);
  if (providers.length === 0) return;
  const { notice, orderId } = await noticeOf(client, approval.id, null);
  await queueAnnouncement(client, { tenantId: approval.tenantId, orderId }, providers, notice);
}

/** Tells each chat channel the call was announced to what became of it, and who decided. */
export async function updateInChat(client: Db, approvalId: string, change: ChatChange): Promise<void> {
  const providers = await providersToUpdate(client, approvalId);
  if (providers.length === 0) return;
  const { notice, orderId, tenantId } = await noticeOf(client, approvalId, change);
  await queueUpdate(client, { tenantId, orderId }, providers, notice);
}
