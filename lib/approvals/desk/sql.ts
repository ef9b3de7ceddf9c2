// The statements of the approval desk: the queue, the facts on its cards and the history.
import type { Client, Db } from "../../db";
import { likeEscaped } from "../../db/sql";
import { Prisma } from "../../generated/prisma/client";
import type { HistoryFilter, QueueFilters, QueueSort } from "./filters";

// The queue

/** The columns a queue row shows, with the id of the agent who asked. */
const ITEM_SELECT = {
  id: true,
  createdAt: true,
  expiresAt: true,
  toolName: true,
  orderId: true,
  impactCents: true,
  preview: true,
  conversationId: true,
  originCallId: true,
  requestedById: true,
} as const;

/** A tenant's requests that can still be decided now. */
const actionable = (tenantId: string) => ({ tenantId, status: "pending", expiresAt: { gt: new Date() } });

const SORT_FIELD = {
  oldest: ["createdAt", "asc"],
  newest: ["createdAt", "desc"],
  expiring: ["expiresAt", "asc"],
  largest: ["impactCents", "desc"],
} as const;

function searchWhere(search: string): Prisma.ApprovalRequestWhereInput {
  const term = search.trim();
  if (term.includes("@")) return { conversation: { customer: { email: { contains: term, mode: "insensitive" } } } };
  return {
    OR: [
      { id: term },
      { orderId: term },
      { originCallId: term },
      { conversation: { customerId: term } },
      { toolCalls: { some: { id: term } } },
    ],
  };
}

/** One page of a tenant's actionable requests matching the filters, in the sort's order, strictly after `cursor`. */
export async function findPendingPage(
  db: Client,
  tenantId: string,
  page: { filters: QueueFilters; sort: QueueSort; cursor?: { key: Date | number; id: string }; take: number },
) {
  const { filters, cursor } = page;
  const [field, direction] = SORT_FIELD[page.sort];
  const beyond = direction === "asc" ? "gt" : "lt";
  const where: Prisma.ApprovalRequestWhereInput[] = [actionable(tenantId)];
  if (filters.agentId) where.push({ requestedById: filters.agentId });
  if (filters.tool) where.push({ toolName: filters.tool });
  if (filters.minCents !== undefined) where.push({ impactCents: { gte: filters.minCents } });
  if (filters.maxCents !== undefined) where.push({ impactCents: { lte: filters.maxCents } });
  if (filters.olderThanMinutes !== undefined)
    where.push({ createdAt: { lte: new Date(Date.now() - filters.olderThanMinutes * 60_000) } });
  if (filters.search?.trim()) where.push(searchWhere(filters.search));
  if (cursor)
    where.push({ OR: [{ [field]: { [beyond]: cursor.key } }, { [field]: cursor.key, id: { [beyond]: cursor.id } }] });
  return db.approvalRequest.findMany({
    where: { AND: where },
    orderBy: [{ [field]: direction }, { id: direction }],
    take: page.take,
    select: ITEM_SELECT,
  });
}

/**
 * A tenant's pending requests in numbers: how many can still be decided (the navigation's count), and for the live
 * desk's stamp how many are open in all, the newest one's time and the latest first approval's. One statement.
 */
export async function pendingNumbers(db: Db, tenantId: string) {
  const [row] = await db.$queryRaw<{ actionable: number; open: number; newest: Date | null; firsts: Date | null }[]>`
    SELECT count(*) FILTER (WHERE "expiresAt" > now())::int AS "actionable", count(*)::int AS "open",
           max("createdAt") AS "newest", max("firstApprovedAt") AS "firsts"
    FROM "ApprovalRequest" WHERE "tenantId" = ${tenantId} AND "status" = 'pending'`;
  return row;
}

export async function findEmails(db: Client, ids: string[]) {
  return db.user.findMany({ where: { id: { in: ids } }, select: { id: true, email: true } });
}

/** The tenant's agents by email. */
export async function findAgents(db: Client, tenantId: string) {
  return db.user.findMany({
    where: { tenantId, role: "AGENT" },
    orderBy: { email: "asc" },
    select: { id: true, name: true, email: true },
  });
}

// Cards beside the queue

/** The tenant's requests among `ids`: who asked, the first approval, and the conversation's customer. */
export async function findCardRequests(db: Client, tenantId: string, ids: string[]) {
  return db.approvalRequest.findMany({
    where: { id: { in: ids }, tenantId },
    select: {
      id: true,
      firstApproverId: true,
      firstApprovedAt: true,
      firstApprovedArgs: true,
      requestedById: true,
      conversation: { select: { customer: { select: { id: true, email: true } } } },
    },
  });
}

/** The tenant's orders among `orderIds` as they stand now. */
export async function findCardOrders(db: Client, tenantId: string, orderIds: string[]) {
  return db.order.findMany({
    where: { id: { in: orderIds }, tenantId },
    select: {
      id: true,
      status: true,
      totalCents: true,
      refundedCents: true,
      currency: true,
      version: true,
      refundPending: true,
      fraudHold: true,
    },
  });
}

/** The refunds of the tenant's orders among `orderIds`, oldest first. */
export async function findCardRefunds(db: Client, tenantId: string, orderIds: string[]) {
  return db.refund.findMany({
    where: { orderId: { in: orderIds }, tenantId },
    orderBy: { createdAt: "asc" },
    select: { id: true, orderId: true, amountCents: true, currency: true, status: true, createdAt: true },
  });
}

/**
 * For each of the tenant's orders among `orderIds`: its oldest `perOrder` actionable requests, each with how many
 * actionable requests the order has in all (`onOrder`). A page's cards stay a page's size however many wait on one
 * order.
 */
export async function findPendingOnOrders(
  db: Db,
  tenantId: string,
  orderIds: string[],
  perOrder: number,
  countUpTo: number,
) {
  const onOrder = Prisma.sql`"tenantId" = ${tenantId} AND "orderId" = o."orderId" AND "status" = 'pending' AND "expiresAt" > now()`;
  return db.$queryRaw<
    {
      id: string;
      orderId: string;
      impactCents: number;
      toolName: string;
      requestedById: string;
      createdAt: Date;
      onOrder: number;
    }[]
  >`
    SELECT r."id", r."orderId", r."impactCents", r."toolName", r."requestedById", r."createdAt", n."onOrder"
    FROM unnest(${orderIds}::text[]) AS o("orderId")
    CROSS JOIN LATERAL (
      SELECT count(*)::int AS "onOrder"
      FROM (SELECT 1 FROM "ApprovalRequest" WHERE ${onOrder} LIMIT ${countUpTo}::int) counted
    ) n
    CROSS JOIN LATERAL (
      SELECT "id", "orderId", "impactCents", "toolName", "requestedById", "createdAt" FROM "ApprovalRequest" WHERE ${onOrder}
      ORDER BY "createdAt", "id" LIMIT ${perOrder}::int
    ) r`;
}

export async function findTenantPeople(db: Client, tenantId: string, ids: string[]) {
  return db.user.findMany({ where: { id: { in: ids }, tenantId }, select: { id: true, name: true, email: true } });
}

// History

export interface HistoryItem {
  id: string;
  status: string;
  toolName: string;
  orderId: string;
  impactCents: number;
  /** The amount approved when a supervisor lowered it. */
  approvedCents: number | null;
  currency: string;
  originCallId: string;
  conversationId: string;
  createdAt: Date;
  decidedAt: Date;
  note: string | null;
  resultCode: string | null;
  /** Emails; the names are shown first. */
  requestedBy: string | null;
  requestedByName: string | null;
  decidedBy: string | null;
  decidedByName: string | null;
  customerEmail: string | null;
}

/** The tenant's supervisors and agents by name then email, with their roles. */
export async function findDecidersAndAgents(db: Client, tenantId: string) {
  return db.user.findMany({
    where: { tenantId, role: { in: ["SUPERVISOR", "AGENT"] } },
    orderBy: [{ name: "asc" }, { email: "asc" }],
    select: { id: true, email: true, name: true, role: true },
  });
}

/**
 * Up to `take` decided or expired requests of one tenant matching the filter, newest decision first, strictly
 * before the cursor, with the names of the people and the customer. The search matches an order, call or request
 * id exactly, or the start of a customer's email.
 */
export async function findDecidedHistory(
  db: Db,
  tenantId: string,
  filter: HistoryFilter,
  take: number,
): Promise<HistoryItem[]> {
  const where: Prisma.Sql[] = [
    Prisma.sql`a."tenantId" = ${tenantId}`,
    Prisma.sql`a."status" <> 'pending'`,
    Prisma.sql`a."decidedAt" IS NOT NULL`,
  ];
  if (filter.outcome) where.push(Prisma.sql`a."status" = ${filter.outcome}`);
  if (filter.decider) where.push(Prisma.sql`a."decidedById" = ${filter.decider}`);
  if (filter.agent) where.push(Prisma.sql`a."requestedById" = ${filter.agent}`);
  if (filter.from) where.push(Prisma.sql`a."decidedAt" >= ${`${filter.from}T00:00:00Z`}::timestamptz`);
  if (filter.to) where.push(Prisma.sql`a."decidedAt" < ${`${filter.to}T00:00:00Z`}::timestamptz + interval '1 day'`);
  if (filter.q) {
    const escaped = likeEscaped(filter.q.toLowerCase());
    where.push(
      Prisma.sql`(a."orderId" = ${filter.q} OR a."originCallId" = ${filter.q} OR a."id" = ${filter.q} OR lower(cu."email") LIKE ${`${escaped}%`})`,
    );
  }
  if (filter.before) {
    const split = filter.before.indexOf("_apr_");
    where.push(
      Prisma.sql`(a."decidedAt", a."id") < (${filter.before.slice(0, split)}::timestamptz, ${filter.before.slice(split + 1)})`,
    );
  }
  return db.$queryRaw<HistoryItem[]>`
    SELECT a."id", a."status", a."toolName", a."orderId", a."impactCents", (a."approvedArgs"->>'amount_cents')::int AS "approvedCents", a."preview"->'impact'->>'currency' AS "currency", a."originCallId",
           a."conversationId", a."createdAt", a."decidedAt", a."note", a."resultCode", requester."email" AS "requestedBy",
           requester."name" AS "requestedByName", decider."email" AS "decidedBy", decider."name" AS "decidedByName",
           cu."email" AS "customerEmail"
    FROM "ApprovalRequest" a
    JOIN "Conversation" c ON c."id" = a."conversationId"
    LEFT JOIN "Customer" cu ON cu."id" = c."customerId"
    LEFT JOIN "User" requester ON requester."id" = a."requestedById"
    LEFT JOIN "User" decider ON decider."id" = a."decidedById"
    WHERE ${Prisma.join(where, " AND ")}
    ORDER BY a."decidedAt" DESC, a."id" DESC
    LIMIT ${take}`;
}
