import type { Db } from "../../db";
import { permissionsFrom, type AgentPermissions } from "../../tools/scopes";
import { lockConversationRow, type LockedConversationRow } from "./sql";

export { conversationLock, type LockedConversationRow } from "./sql";

export interface LockedFacts {
  writesMade: number;
  irreversibleCents: number;
  agent: AgentPermissions | null;
}

/**
 * Takes the conversation's row lock for the rest of the transaction and returns its budgets and its agent's
 * permission as they are now, in the same statement. Every write and every approval decision goes through here
 * first, so they are serialized per conversation and always take locks in the same order (conversation, then
 * approval request, then order).
 */
export async function lockConversation<T extends { id: string }>(
  client: Db,
  conversation: T,
): Promise<T & LockedFacts> {
  return lockedFacts(conversation, await lockConversationRow(client, conversation.id));
}

/** The conversation with what its lock read (`conversationLock`'s row, sent by whoever took the lock). */
export function lockedFacts<T extends { id: string }>(
  conversation: T,
  row: LockedConversationRow | null | undefined,
): T & LockedFacts {
  if (!row) throw new Error(`conversation ${conversation.id} vanished during a call`);
  return {
    ...conversation,
    writesMade: row.writesMade,
    irreversibleCents: row.irreversibleCents,
    agent: permissionsFrom(row),
  };
}
