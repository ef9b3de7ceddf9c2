import type { Db } from "./index";
import { newId } from "../ids";
import type { Prisma } from "../generated/prisma/client";
import { insertOutboxMessages, outboxInsert } from "./sql";

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
