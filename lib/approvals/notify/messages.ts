import type { QueuedMessage } from "../../db/outbox";
import type { RequestAudience } from "./sql";

/**
 * The messages that announce a new request: an email to each supervisor (`bodyFor` writes each one's, which may carry
 * that supervisor's own link) and, when the tenant set a webhook, its `approval.requested` event with `fields`.
 */
export function requestedMessages(
  audience: RequestAudience,
  approval: { id: string; expiresAt: Date },
  email: { subject: string; bodyFor: (supervisorId: string) => string },
  fields: Record<string, unknown>,
): QueuedMessage[] {
  const messages: QueuedMessage[] = audience.supervisors.map((supervisor) => ({
    kind: "approval_email",
    recipient: supervisor.email,
    subject: email.subject,
    body: email.bodyFor(supervisor.id),
  }));
  if (audience.webhookUrl) {
    messages.push({
      kind: "webhook",
      recipient: audience.webhookUrl,
      subject: "approval.requested",
      body: JSON.stringify({
        type: "approval.requested",
        approval_id: approval.id,
        ...fields,
        expires_at: approval.expiresAt.toISOString(),
      }),
    });
  }
  return messages;
}
