import type { Db } from "./index";
import { newId } from "../ids";
import type { Prisma } from "../generated/prisma/client";
import { insertOutboxMessages, outboxInsert } from "./sql";

/**
 * Where the single-use link in an approval email points: the page that shows the request and posts the decision
 * (lib/approvals/email-links/). The token after it is in the stored body only while the mail waits in the outbox: the
 * sender removes it when the mail is sent or given up (lib/mail/sql.ts), so the database keeps a live token only as
 * its SHA-256.
 */
export const APPROVAL_LINK_PATH = "/approvals/r/";

export interface QueuedMessage {
  kind: string;
  recipient: string;
  subject: string;
  body: string;
}

/**
 * The one writer of the outbox: rows written in the caller's transaction, so they exist only if what decided
 * them commits, and delivered afterwards by `lib/mail/delivery.ts`. Returns the new rows' ids, in order.
 */
export async function queueMessages(
  client: Db,
  owner: { tenantId: string; orderId: string | null; toolCallId: string | null },
  messages: QueuedMessage[],
): Promise<string[]> {
  if (messages.length === 0) return [];
  const rows = messages.map((message) => ({ id: newId("msg"), ...message }));
  await insertOutboxMessages(client, owner, rows);
  return rows.map((row) => row.id);
}

/**
 * `queueMessages` as a statement for the caller to run with its own (a tool's effect, written with its order's move):
 * the rows are written once for each row of `from`, a FROM clause (`, moved`). Returns the rows' ids, in order.
 */
export function queueMessagesWith(
  owner: { tenantId: string; orderId: string | null; toolCallId: string | null },
  messages: QueuedMessage[],
  from: Prisma.Sql,
): { ids: string[]; statement: Prisma.Sql } {
  const rows = messages.map((message) => ({ id: newId("msg"), ...message }));
  return { ids: rows.map((row) => row.id), statement: outboxInsert(owner, rows, from) };
}
