import { db } from "../db";
import { likeEscaped } from "../db/sql";
import { isWellFormedId } from "../security/input";
import {
  findAgentConversationDetail,
  findAgentConversations,
  findConversationCalls,
  findConversationSwitches,
  findCustomers,
  isAgentConversation,
  latestCallChange,
  type ConversationListItem,
  type CustomerChoice,
} from "./sql";

export type { ConversationListItem, ConversationSwitch, CustomerChoice } from "./sql";

/** The agent's conversations, most recently active first, with the customer, open approvals and call counts. */
export async function listAgentConversations(agent: {
  userId: string;
  tenantId: string;
}): Promise<ConversationListItem[]> {
  return findAgentConversations(db, agent);
}

/** Customers of the agent's tenant for the picker: by the start of the email (or any part of it) or the exact id. */
export async function searchCustomers(tenantId: string, query: string): Promise<CustomerChoice[]> {
  const q = query.trim().toLowerCase().slice(0, 100);
  return findCustomers(db, tenantId, q, likeEscaped(q));
}

/** Whether the conversation is this agent's own (false for a malformed id, another agent's or another tenant's). */
export async function isOwnConversation(agent: { userId: string; tenantId: string }, conversationId: string) {
  return isWellFormedId(conversationId) && isAgentConversation(db, agent, conversationId);
}

/** The conversation's call count and latest change: what its live view compares to notice a change. */
export async function callsStamp(conversationId: string): Promise<string> {
  const latest = await latestCallChange(db, conversationId);
  return `${latest.count}:${latest.updatedAt?.toISOString() ?? ""}`;
}

export async function conversationCalls(agent: { userId: string; tenantId: string }, conversationId: string) {
  if (!isWellFormedId(conversationId)) return null;
  const conversation = await findAgentConversationDetail(db, agent, conversationId);
  if (!conversation) return null;
  const [calls, switches] = await Promise.all([
    findConversationCalls(db, conversationId),
    findConversationSwitches(db, agent.tenantId, conversationId),
  ]);
  return { conversation, calls, switches };
}
