import "server-only";
import { z } from "zod";
import { agentKeyRows, apiKeyHash, type AuthenticatedAgent } from "../auth/api-keys";
import { db, type Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import { countCall, type RateCount } from "../gateway/rate";
import type { ConversationFacts, TenantPolicy } from "../gateway/types";
import { newId } from "../ids";
import { IdSchema, isWellFormedId } from "../security/input";
import { findTool, TOOL_NAMES } from "../tools/registry";
import { permissionsFrom, scopesFor } from "../tools/scopes";

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
  const user = await db.user.findFirst({
    where: { id: agent.userId, tenantId: agent.tenantId },
    select: { role: true, canRefund: true, active: true },
  });
  if (!user || scopesFor(user).length === 0)
    return { ok: false, code: "agent.not-authorized", message: "only active agents open conversations" };

  const unknown = (input.tools ?? []).filter((name) => !findTool(name));
  if (unknown.length > 0)
    return { ok: false, code: "tool.unknown", message: `unknown tools requested: ${unknown.length}` };
  const tools = input.tools ? TOOL_NAMES.filter((name) => input.tools?.includes(name)) : [...TOOL_NAMES];

  const customer = await db.customer.findFirst({
    where: { id: input.customer_id, tenantId: agent.tenantId },
    select: { id: true },
  });
  if (!customer) return { ok: false, code: "customer.not-found", message: "no such customer" };
  if (input.order_id !== undefined) {
    const order = await db.order.findFirst({
      where: { id: input.order_id, tenantId: agent.tenantId, customerId: customer.id },
      select: { id: true },
    });
    if (!order) return { ok: false, code: "order.not-found", message: "no such order for this customer" };
  }

  const needed = new Set(tools.map((name) => findTool(name)?.scope));
  const scopes = scopesFor(user).filter((scope) => needed.has(scope));
  const conversation = await db.conversation.create({
    data: {
      id: newId("conv"),
      tenantId: agent.tenantId,
      agentId: agent.userId,
      customerId: customer.id,
      orderId: input.order_id ?? null,
      tools,
      scopes,
    },
    select: { id: true, tools: true, scopes: true },
  });
  return { ok: true, conversation };
}

interface ConversationRow extends Omit<ConversationFacts, "agent">, TenantPolicy {
  agentRole: string | null;
  agentCanRefund: boolean | null;
  agentActive: boolean | null;
}

export interface FoundConversation {
  conversation: ConversationFacts;
  policy: TenantPolicy;
}

// The columns of a conversation with its tenant's policy and its agent's current permission, for the two
// per-request lookups below (aliases c, t and u).
const CONVERSATION_COLUMNS = Prisma.sql`
  c."id", c."tenantId", c."agentId", c."customerId", c."orderId", c."tools", c."scopes", c."writesMade", c."irreversibleCents",
  t."autoLimitCents", t."sessionCapCents", t."maxAutoWrites", t."approvalTtlSeconds", t."rateConversationPerMin", t."rateKeyPerMin",
  u."role"::text AS "agentRole", u."canRefund" AS "agentCanRefund", u."active" AS "agentActive"`;

function toFound(row: ConversationRow): FoundConversation {
  const {
    autoLimitCents,
    sessionCapCents,
    maxAutoWrites,
    approvalTtlSeconds,
    rateConversationPerMin,
    rateKeyPerMin,
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
  const [row] = await client.$queryRaw<ConversationRow[]>`
    SELECT ${CONVERSATION_COLUMNS}
    FROM "Conversation" c JOIN "Tenant" t ON t."id" = c."tenantId"
    LEFT JOIN "User" u ON u."id" = c."agentId" AND u."tenantId" = c."tenantId"
    WHERE c."id" = ${conversationId}
      AND (${agentId}::text IS NULL OR c."agentId" = ${agentId}::text)
      AND (${tenantId}::text IS NULL OR c."tenantId" = ${tenantId}::text)`;
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
  const key = agentKeyRows(hash);
  const lookup = Prisma.sql`
    SELECT k."id" AS "apiKeyId", ku."id" AS "userId", k."tenantId" AS "keyTenantId", ${CONVERSATION_COLUMNS}
    FROM ${key.from}
    LEFT JOIN "Conversation" c ON c."id" = ${conversationId} AND c."agentId" = ku."id" AND c."tenantId" = k."tenantId"
    LEFT JOIN "Tenant" t ON t."id" = c."tenantId"
    LEFT JOIN "User" u ON u."id" = c."agentId" AND u."tenantId" = c."tenantId"
    WHERE ${key.where}`;
  const buckets = Prisma.sql`(SELECT ARRAY['c:' || f."id", 'k:' || f."apiKeyId"] FROM found f WHERE f."id" IS NOT NULL)`;
  const statement = options.countCall
    ? Prisma.sql`WITH found AS (${lookup}), counted AS (${countCall(buckets)})
        SELECT found.*, (SELECT json_agg(counted) FROM counted) AS "rateCounted" FROM found`
    : lookup;
  const [row] =
    await db.$queryRaw<
      ({ apiKeyId: string; userId: string; keyTenantId: string; rateCounted?: RateCount[] | null } & (
        ConversationRow | { id: null }
      ))[]
    >(statement);
  if (!row) return null;
  const { apiKeyId, userId, keyTenantId, rateCounted, ...conversation } = row;
  const agent = { apiKeyId, userId, tenantId: keyTenantId };
  if (conversation.id === null) return { agent, found: null };
  return { agent, found: toFound(conversation), ...(rateCounted ? { rateCounted } : {}) };
}

export interface ConversationListItem {
  id: string;
  customerId: string;
  customerEmail: string;
  orderId: string | null;
  createdAt: Date;
  lastActivityAt: Date;
  calls: number;
  writesMade: number;
  irreversibleCents: number;
  pending: number;
}

/** The agent's conversations, most recently active first, with the customer, open approvals and call counts. */
export async function listAgentConversations(agent: {
  userId: string;
  tenantId: string;
}): Promise<ConversationListItem[]> {
  return db.$queryRaw<ConversationListItem[]>`
    SELECT c."id", c."customerId", cu."email" AS "customerEmail", c."orderId", c."createdAt", c."writesMade", c."irreversibleCents",
           GREATEST(c."createdAt", calls."last") AS "lastActivityAt", calls."count"::int AS "calls",
           (SELECT count(*)::int FROM "ApprovalRequest" a
            WHERE a."conversationId" = c."id" AND a."status" = 'pending' AND a."expiresAt" > now()) AS "pending"
    FROM "Conversation" c
    JOIN "Customer" cu ON cu."id" = c."customerId"
    CROSS JOIN LATERAL (SELECT count(*) AS "count", max(t."updatedAt") AS "last" FROM "ToolCall" t WHERE t."conversationId" = c."id") calls
    WHERE c."agentId" = ${agent.userId} AND c."tenantId" = ${agent.tenantId}
    ORDER BY "lastActivityAt" DESC, c."id" DESC
    LIMIT 100`;
}

export interface CustomerChoice {
  id: string;
  email: string;
  orders: { id: string; status: string; totalCents: number; currency: string }[];
}

/** Customers of the agent's tenant for the picker: by the start of the email (or any part of it) or the exact id. */
export async function searchCustomers(tenantId: string, query: string): Promise<CustomerChoice[]> {
  const q = query.trim().toLowerCase().slice(0, 100);
  const escaped = q.replace(/[\\%_]/g, (char) => `\\${char}`);
  return db.$queryRaw<CustomerChoice[]>`
    SELECT cu."id", cu."email",
           COALESCE((SELECT json_agg(json_build_object('id', o."id", 'status', o."status", 'totalCents', o."totalCents", 'currency', o."currency") ORDER BY o."id")
                     FROM "Order" o WHERE o."customerId" = cu."id" AND o."tenantId" = cu."tenantId"), '[]'::json) AS "orders"
    FROM "Customer" cu
    WHERE cu."tenantId" = ${tenantId} AND (${q} = '' OR lower(cu."email") LIKE ${`%${escaped}%`} OR lower(cu."id") = ${q})
    ORDER BY lower(cu."email") LIKE ${`${escaped}%`} DESC, cu."email"
    LIMIT 10`;
}

export async function conversationCalls(agent: { userId: string; tenantId: string }, conversationId: string) {
  if (!isWellFormedId(conversationId)) return null;
  const conversation = await db.conversation.findFirst({
    where: { id: conversationId, agentId: agent.userId, tenantId: agent.tenantId },
    select: {
      id: true,
      customerId: true,
      orderId: true,
      tools: true,
      scopes: true,
      writesMade: true,
      irreversibleCents: true,
      createdAt: true,
      customer: { select: { email: true } },
    },
  });
  if (!conversation) return null;
  const calls = await db.toolCall.findMany({
    where: { conversationId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 200,
    select: {
      id: true,
      toolName: true,
      kind: true,
      stage: true,
      code: true,
      orderId: true,
      approvalId: true,
      argsCanonical: true,
      outcome: true,
      createdAt: true,
      updatedAt: true,
      approval: { select: { approvedArgs: true } },
    },
  });
  return { conversation, calls };
}
