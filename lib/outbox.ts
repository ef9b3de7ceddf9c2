import type { Db } from "./db";
import { newId } from "./ids";

export interface QueuedMessage {
  kind: string;
  recipient: string;
  subject: string;
  body: string;
}

/**
 * The one writer of the outbox: rows written in the caller's transaction, so they exist only if what decided
 * them commits, and delivered afterwards by `lib/mail/outbox.ts` (delivery). Returns the new rows' ids, in order.
 */
export async function queueMessages(
  client: Db,
  owner: { tenantId: string; orderId: string | null; toolCallId: string | null },
  messages: QueuedMessage[],
): Promise<string[]> {
  if (messages.length === 0) return [];
  const rows = messages.map((message) => ({ id: newId("msg"), ...message }));
  await client.$executeRaw`
    INSERT INTO "OutboxMessage" ("id", "tenantId", "orderId", "toolCallId", "kind", "recipient", "subject", "body")
    SELECT message."id", ${owner.tenantId}, ${owner.orderId}::text, ${owner.toolCallId}::text, message."kind", message."recipient", message."subject", message."body"
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS message("id" text, "kind" text, "recipient" text, "subject" text, "body" text)`;
  return rows.map((row) => row.id);
}
