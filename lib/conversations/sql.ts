import { agentKeyRows, type KeyCredential } from "../auth/keys/sql";
import type { Client, Db, Tx } from "../db";
import { Prisma } from "../generated/prisma/client";
import { countCall } from "../db/sql";
import { ORDER_FACTS, orderById } from "../tools/sql";
import type { OrderFacts } from "../tools/types";
import type { ConversationFacts, RateCount, TenantPolicy } from "../gateway";

export interface CustomerChoice {
  id: string;
  email: string;
  orders: { id: string; status: string; totalCents: number; currency: string }[];
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

// The conversations module's statements: opening a conversation, the per-request lookups of one, and the
// agent's pages (their conversations, a conversation's calls, the customer picker).

interface Agent {
  userId: string;
  tenantId: string;
}

/** A conversation with its tenant's policy and its agent's current permission, as one row. */
export interface ConversationRow extends Omit<ConversationFacts, "agent">, TenantPolicy {
  agentRole: string | null;
  agentCanRefund: boolean | null;
  agentActive: boolean | null;
}

// The columns of a ConversationRow, for the two per-request lookups below (aliases c, t and u).
const CONVERSATION_COLUMNS = Prisma.sql`
  c."id", c."tenantId", c."agentId", c."customerId", c."orderId", c."tools", c."scopes", c."writesMade", c."irreversibleCents",
  t."autoLimitCents", t."sessionCapCents", t."maxAutoWrites", t."approvalTtlSeconds", t."rateConversationPerMin", t."rateKeyPerMin",
  t."duplicateWindowHours", t."liveRuleSetId", t."shadowRuleSetId",
  u."role"::text AS "agentRole", u."canRefund" AS "agentCanRefund", u."active" AS "agentActive"`;

/** The agent's role and permissions as they are now, or null when the agent is not of that tenant. */
export async function findAgentPermissions(db: Client, agent: Agent) {
  return db.user.findFirst({
    where: { id: agent.userId, tenantId: agent.tenantId },
    select: { role: true, canRefund: true, active: true },
  });
}

export async function customerExists(db: Client, tenantId: string, customerId: string): Promise<boolean> {
  return (await db.customer.findFirst({ where: { id: customerId, tenantId }, select: { id: true } })) !== null;
}

export async function customerOrderExists(
  db: Client,
  tenantId: string,
  customerId: string,
  orderId: string,
): Promise<boolean> {
  const order = await db.order.findFirst({ where: { id: orderId, tenantId, customerId }, select: { id: true } });
  return order !== null;
}

/** A conversation to store: who opens it, about whom, and what it may do. */
export type NewConversation = Pick<
  ConversationFacts,
  "id" | "tenantId" | "agentId" | "customerId" | "orderId" | "tools" | "scopes"
>;

/** Stores a new conversation; returns its id, tools and scopes. */
export async function insertConversation(
  db: Db,
  conversation: NewConversation,
): Promise<{ id: string; tools: string[]; scopes: string[] }> {
  const { id, tenantId, agentId, customerId, orderId, tools, scopes } = conversation;
  const [row] = await db.$queryRaw<{ id: string; tools: string[]; scopes: string[] }[]>`
    INSERT INTO "Conversation" ("id", "tenantId", "agentId", "customerId", "orderId", "tools", "scopes")
    VALUES (${id}, ${tenantId}, ${agentId}, ${customerId}, ${orderId}, ${tools}, ${scopes})
    RETURNING "id", "tools", "scopes"`;
  return row;
}

/**
 * The conversation's row, or null. A non-null `agentId` or `tenantId` finds it only when it is that
 * agent's or in that tenant.
 */
export async function findConversationRow(
  db: Db,
  conversationId: string,
  agentId: string | null,
  tenantId: string | null,
): Promise<ConversationRow | null> {
  const [row] = await db.$queryRaw<ConversationRow[]>`
    SELECT ${CONVERSATION_COLUMNS}
    FROM "Conversation" c JOIN "Tenant" t ON t."id" = c."tenantId"
    LEFT JOIN "User" u ON u."id" = c."agentId" AND u."tenantId" = c."tenantId"
    WHERE c."id" = ${conversationId}
      AND (${agentId}::text IS NULL OR c."agentId" = ${agentId}::text)
      AND (${tenantId}::text IS NULL OR c."tenantId" = ${tenantId}::text)`;
  return row ?? null;
}

type KeyConversationRow = {
  apiKeyId: string;
  userId: string;
  keyTenantId: string;
  rateCounted?: RateCount[] | null;
  hintedOrder: OrderFacts | null;
} & (ConversationRow | { id: null });

/**
 * The agent of the key with this hash and, in the same statement, that agent's conversation (every conversation
 * column null when it is not theirs); null when the key does not authenticate. A null `conversationId` names the
 * conversation the key's OAuth connection works on, as its person chose it (none for a pasted key). With `countCall`, also
 * counts one call of the key in the conversation when both were found (`rateCounted`). With `orderHint`, also reads
 * that order (`hintedOrder`, as `findCallFacts` reads it) only when it is the conversation's customer's in its tenant.
 */
export async function findKeyAndConversation(
  db: Db,
  credential: KeyCredential,
  conversationId: string | null,
  options: { countCall?: boolean; orderHint?: string | null },
): Promise<KeyConversationRow | null> {
  const key = agentKeyRows(credential);
  const hinted = options.orderHint
    ? Prisma.sql`(SELECT row_to_json(h) FROM (
        SELECT ${ORDER_FACTS} FROM ${orderById(options.orderHint)} JOIN "Customer" cu ON cu."id" = o."customerId"
        WHERE o."tenantId" = c."tenantId" AND o."customerId" = c."customerId") h)`
    : Prisma.sql`NULL::json`;
  const lookup = Prisma.sql`
    SELECT k."id" AS "apiKeyId", ku."id" AS "userId", k."tenantId" AS "keyTenantId", ${CONVERSATION_COLUMNS},
           ${hinted} AS "hintedOrder"
    FROM ${key.from}
    LEFT JOIN "Conversation" c ON c."agentId" = ku."id" AND c."tenantId" = k."tenantId" AND c."id" = COALESCE(
      ${conversationId}::text,
      (SELECT g."workingConversationId" FROM "OAuthGrant" g WHERE g."apiKeyId" = k."id" AND g."revokedAt" IS NULL))
    LEFT JOIN "Tenant" t ON t."id" = c."tenantId"
    LEFT JOIN "User" u ON u."id" = c."agentId" AND u."tenantId" = c."tenantId"
    WHERE ${key.where}`;
  // The agent's bucket as lib/gateway/checks/rate.ts names it ("a:" and the agent's id): one across all its keys.
  const buckets = Prisma.sql`(SELECT ARRAY['c:' || f."id", 'a:' || f."userId"] FROM found f WHERE f."id" IS NOT NULL)`;
  const statement = options.countCall
    ? Prisma.sql`WITH found AS (${lookup}), counted AS (${countCall(buckets)})
        SELECT found.*, (SELECT json_agg(counted) FROM counted) AS "rateCounted" FROM found`
    : lookup;
  const [row] = await db.$queryRaw<KeyConversationRow[]>(statement);
  return row ?? null;
}

/** The agent's latest 100 conversations, most recently active first, with the customer, open approvals and calls. */
export async function findAgentConversations(db: Db, agent: Agent): Promise<ConversationListItem[]> {
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

/**
 * Up to 10 of the tenant's customers with their orders: all when `q` is empty, else those whose lowercased email
 * contains `escaped` (`q` with LIKE's wildcards escaped) or whose lowercased id is `q`; emails starting with it first.
 */
export async function findCustomers(db: Db, tenantId: string, q: string, escaped: string): Promise<CustomerChoice[]> {
  return db.$queryRaw<CustomerChoice[]>`
    SELECT cu."id", cu."email",
           COALESCE((SELECT json_agg(json_build_object('id', o."id", 'status', o."status", 'totalCents', o."totalCents", 'currency', o."currency") ORDER BY o."id")
                     FROM "Order" o WHERE o."customerId" = cu."id" AND o."tenantId" = cu."tenantId"), '[]'::json) AS "orders"
    FROM "Customer" cu
    WHERE cu."tenantId" = ${tenantId} AND (${q} = '' OR lower(cu."email") LIKE ${`%${escaped}%`} OR lower(cu."id") = ${q})
    ORDER BY lower(cu."email") LIKE ${`${escaped}%`} DESC, cu."email"
    LIMIT 10`;
}

/** The agent's conversation with its customer's email, or null when it is not this agent's. */
export async function findAgentConversationDetail(db: Client, agent: Agent, conversationId: string) {
  return db.conversation.findFirst({
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
}

export async function isAgentConversation(db: Client, agent: Agent, conversationId: string): Promise<boolean> {
  const owned = await db.conversation.findFirst({
    where: { id: conversationId, agentId: agent.userId, tenantId: agent.tenantId },
    select: { id: true },
  });
  return owned !== null;
}

/** The conversation's latest 200 calls, newest first, each with the arguments its approver approved. */
export async function findConversationCalls(db: Client, conversationId: string) {
  return db.toolCall.findMany({
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
}

/** How many calls the conversation has and when one last changed (null without calls). */
export async function latestCallChange(
  db: Client,
  conversationId: string,
): Promise<{ count: number; updatedAt: Date | null }> {
  const latest = await db.toolCall.aggregate({
    where: { conversationId },
    _max: { updatedAt: true },
    _count: true,
  });
  return { count: latest._count, updatedAt: latest._max.updatedAt };
}

/** A person's live OAuth connection with the customer it works on (null until they choose one). */
export interface WorkingConnection {
  id: string;
  clientName: string;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  conversationId: string | null;
  customerId: string | null;
  customerEmail: string | null;
}

/**
 * The agent's live OAuth connections, newest first, each with the conversation and customer it works on: the 50
 * newest, or only the one named by `grantId` (however old).
 */
export async function findWorkingConnections(
  db: Db,
  agent: Agent,
  grantId: string | null = null,
): Promise<WorkingConnection[]> {
  return db.$queryRaw<WorkingConnection[]>`
    SELECT g."id", cl."name" AS "clientName", g."scopes", g."createdAt", g."lastUsedAt",
           c."id" AS "conversationId", cu."id" AS "customerId", cu."email" AS "customerEmail"
    FROM "OAuthGrant" g
    JOIN "OAuthClient" cl ON cl."id" = g."clientId"
    LEFT JOIN "Conversation" c ON c."id" = g."workingConversationId" AND c."agentId" = g."agentId"
    LEFT JOIN "Customer" cu ON cu."id" = c."customerId"
    WHERE g."agentId" = ${agent.userId} AND g."tenantId" = ${agent.tenantId} AND g."revokedAt" IS NULL
      AND (${grantId}::text IS NULL OR g."id" = ${grantId})
    ORDER BY g."createdAt" DESC, g."id" DESC
    LIMIT 50`;
}

/**
 * The agent's conversation about this customer to resume on a switch: the newest one opened in the last 24 hours,
 * bound to no single order, so switching back and forth keeps its budgets instead of opening fresh ones.
 */
export async function findResumableConversation(db: Db, agent: Agent, customerId: string): Promise<string | null> {
  const [row] = await db.$queryRaw<{ id: string }[]>`
    SELECT "id" FROM "Conversation"
    WHERE "agentId" = ${agent.userId} AND "tenantId" = ${agent.tenantId} AND "customerId" = ${customerId}
      AND "orderId" IS NULL AND "createdAt" > CURRENT_TIMESTAMP - interval '24 hours'
    ORDER BY "createdAt" DESC, "id" DESC
    LIMIT 1`;
  return row?.id ?? null;
}

/**
 * Locks the agent's live connection until the transaction ends, so a revocation either committed before (and the
 * connection is not found) or waits for it; the client and its current choice, or null when the connection is not
 * this agent's or is revoked.
 */
export async function lockLiveConnection(
  tx: Tx,
  agent: Agent,
  grantId: string,
): Promise<{ clientId: string; previousConversationId: string | null } | null> {
  const [row] = await tx.$queryRaw<{ clientId: string; previousConversationId: string | null }[]>`
    SELECT "clientId", "workingConversationId" AS "previousConversationId" FROM "OAuthGrant"
    WHERE "id" = ${grantId} AND "agentId" = ${agent.userId} AND "tenantId" = ${agent.tenantId}
      AND "revokedAt" IS NULL FOR NO KEY UPDATE`;
  return row ?? null;
}

/** Points a connection that `lockLiveConnection` locked at one of its agent's conversations. */
export async function setWorkingConversation(tx: Tx, grantId: string, conversationId: string): Promise<void> {
  await tx.$executeRaw`UPDATE "OAuthGrant" SET "workingConversationId" = ${conversationId} WHERE "id" = ${grantId}`;
}

/** A connection's switch to or away from a conversation, as the audit log keeps it. */
export interface ConversationSwitch {
  at: Date;
  clientName: string | null;
  actorName: string | null;
  /** True when the connection switched to this conversation, false when it switched away. */
  arrived: boolean;
}

/** The latest 20 switches of the tenant's connections to or away from this conversation, newest first. */
export async function findConversationSwitches(
  db: Db,
  tenantId: string,
  conversationId: string,
): Promise<ConversationSwitch[]> {
  return db.$queryRaw<ConversationSwitch[]>`
    SELECT a."createdAt" AS "at", cl."name" AS "clientName", u."name" AS "actorName",
           (a."detail" ->> 'conversationId' = ${conversationId}) AS "arrived"
    FROM "AuditLog" a
    LEFT JOIN "OAuthClient" cl ON cl."id" = a."detail" ->> 'clientId'
    LEFT JOIN "User" u ON u."id" = a."actorId" AND u."tenantId" = a."tenantId"
    WHERE a."tenantId" = ${tenantId} AND a."action" = 'connection.customer-switched'
      AND (a."detail" ->> 'conversationId' = ${conversationId} OR a."detail" ->> 'previousConversationId' = ${conversationId})
    ORDER BY a."createdAt" DESC, a."id" DESC
    LIMIT 20`;
}
