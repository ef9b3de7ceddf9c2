import type { Tx } from "../db";
/**
 * Takes the conversation's row lock for the rest of the transaction and returns its budgets as they are now.
 * Every write and every approval decision goes through here first, so they are serialized per conversation
 * and always take locks in the same order (conversation, then approval request, then order).
 */
export async function lockConversation<T extends { id: string }>(
  client: Tx,
  conversation: T,
): Promise<T & { writesMade: number; irreversibleCents: number }> {
  const [row] = await client.$queryRaw<{ writesMade: number; irreversibleCents: number }[]>`
    SELECT "writesMade", "irreversibleCents" FROM "Conversation" WHERE "id" = ${conversation.id} FOR UPDATE`;
  if (!row) throw new Error(`conversation ${conversation.id} vanished during a call`);
  return { ...conversation, writesMade: row.writesMade, irreversibleCents: row.irreversibleCents };
}
