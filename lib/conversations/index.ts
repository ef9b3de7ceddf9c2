import "server-only";
import { z } from "zod";
import { apiKeyHash, type AuthenticatedAgent } from "../auth/api-keys";
import { db, type Db } from "../db";
import type { RateCount } from "../gateway/types";
import type { ConversationFacts, TenantPolicy } from "../gateway/types";
import { newId } from "../ids";
import { IdSchema, isWellFormedId } from "../security/input";
import { findTool, TOOL_NAMES } from "../tools/registry";
import { permissionsFrom, scopesFor } from "../tools/scopes";
import {
  customerExists,
  customerOrderExists,
  findAgentConversationDetail,
  findAgentConversations,
  findAgentPermissions,
  findConversationCalls,
  findConversationRow,
  findCustomers,
  findKeyAndConversation,
  insertConversation,
  type ConversationListItem,
  type ConversationRow,
  type CustomerChoice,
} from "./sql";

export type { ConversationListItem, CustomerChoice } from "./sql";

export const OpenConversationSchema = z.strictObject({
  customer_id: IdSchema,
  order_id: IdSchema.optional(),
  tools: z.array(z.string().min(1).max(100)).max(TOOL_NAMES.length).optional(),
});
export type OpenConversation = z.infer<typeof OpenConversationSchema>;

export type OpenResult =
  | { ok: true; conversation: { id: string; tools: string[]; scopes: string[] } }
  | {
      ok: false;
      code: "customer.not-found" | "order.not-found" | "tool.unknown" | "agent.not-authorized";
      message: string;
    };

/**
 * Opens a conversation for one authenticated agent and one customer of the agent's tenant. Scopes come from
 * the agent's permissions, narrowed to what the exposed tools need; the request can only narrow the tools.
 */
export async function openConversation(
  agent: { userId: string; tenantId: string },
  input: OpenConversation,
): Promise<OpenResult> {
  const user = await findAgentPermissions(db, agent);
  if (!user || scopesFor(user).length === 0)
    return { ok: false, code: "agent.not-authorized", message: "only active agents open conversations" };

  const unknown = (input.tools ?? []).filter((name) => !findTool(name));
  if (unknown.length > 0)
    return { ok: false, code: "tool.unknown", message: `unknown tools requested: ${unknown.length}` };
  const tools = input.tools ? TOOL_NAMES.filter((name) => input.tools?.includes(name)) : [...TOOL_NAMES];

  if (!(await customerExists(db, agent.tenantId, input.customer_id)))
    return { ok: false, code: "customer.not-found", message: "no such customer" };
  if (
    input.order_id !== undefined &&
    !(await customerOrderExists(db, agent.tenantId, input.customer_id, input.order_id))
  )
    return { ok: false, code: "order.not-found", message: "no such order for this customer" };

  const needed = new Set(tools.map((name) => findTool(name)?.scope));
  const scopes = scopesFor(user).filter((scope) => needed.has(scope));
  const conversation = await insertConversation(db, {
    id: newId("conv"),
    tenantId: agent.tenantId,
    agentId: agent.userId,
    customerId: input.customer_id,
    orderId: input.order_id ?? null,
    tools,
    scopes,
  });
  return { ok: true, conversation };
}

export interface FoundConversation {
  conversation: ConversationFacts;
  policy: TenantPolicy;
}

function toFound(row: ConversationRow): FoundConversation {
  const {
    autoLimitCents,
    sessionCapCents,
    maxAutoWrites,
    approvalTtlSeconds,
    rateConversationPerMin,
    rateKeyPerMin,
    duplicateWindowHours,
    agentRole,
    agentCanRefund,
    agentActive,
    ...facts
  } = row;
  return {
    conversation: {
      ...facts,
      agent: permissionsFrom({ role: agentRole, canRefund: agentCanRefund, active: agentActive }),
    },
    policy: {
      autoLimitCents,
      sessionCapCents,
      maxAutoWrites,
      approvalTtlSeconds,
      rateConversationPerMin,
      rateKeyPerMin,
      duplicateWindowHours,
    },
  };
}

/** The conversation with its tenant's policy, only if it belongs to this agent: anyone else gets null. */
export async function findAgentConversation(
  agent: { userId: string; tenantId: string },
  conversationId: string,
): Promise<FoundConversation | null> {
  return loadConversation(db, conversationId, agent);
}

/**
 * One statement, rather than an ORM query per relation (docs/BENCHMARKS.md). With an agent, only that agent's
 * conversation in that agent's tenant is found; without, any (for host-side work).
 */
export async function loadConversation(
  client: Db,
  conversationId: string,
  agent?: { userId: string; tenantId: string },
): Promise<FoundConversation | null> {
  if (!isWellFormedId(conversationId)) return null;
  const agentId = agent?.userId ?? null;
  const tenantId = agent?.tenantId ?? null;
  const row = await findConversationRow(client, conversationId, agentId, tenantId);
  return row ? toFound(row) : null;
}

/**
 * The bearer key's agent and, in the same statement, that agent's conversation with its policy: the one lookup
 * every conversation route of the agent API makes. Null for a key that does not authenticate (see
 * `authenticateApiKey`); `found` is null when the conversation is missing or another agent's. With
 * `countCall`, the same statement also counts one call of this key in this conversation for the rate stage
 * (`rateCounted`, for `proposeCall`), only when both were found.
 */
export async function authenticateForConversation(
  authorization: string | null,
  conversationId: string,
  options: { countCall?: boolean } = {},
): Promise<{ agent: AuthenticatedAgent; found: FoundConversation | null; rateCounted?: RateCount[] } | null> {
  const hash = apiKeyHash(authorization);
  if (hash === null) return null;
  // A malformed id names no conversation; the key is still checked, so the answer is 404, never a database error.
  if (!isWellFormedId(conversationId)) conversationId = "";
  // Every conversation column is null when the conversation is not this agent's.
  const row = await findKeyAndConversation(db, hash, conversationId, options);
  if (!row) return null;
  const { apiKeyId, userId, keyTenantId, rateCounted, ...conversation } = row;
  const agent = { apiKeyId, userId, tenantId: keyTenantId };
  if (conversation.id === null) return { agent, found: null };
  return { agent, found: toFound(conversation), ...(rateCounted ? { rateCounted } : {}) };
}

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
  const escaped = q.replace(/[\\%_]/g, (char) => `\\${char}`);
  return findCustomers(db, tenantId, q, escaped);
}

export async function conversationCalls(agent: { userId: string; tenantId: string }, conversationId: string) {
  if (!isWellFormedId(conversationId)) return null;
  const conversation = await findAgentConversationDetail(db, agent, conversationId);
  if (!conversation) return null;
  const calls = await findConversationCalls(db, conversationId);
  return { conversation, calls };
}
