// Every statement of the approval desk: requests, their links and the tenant's desk policy. Raw
// statements take a `Db` (a `Tx` when they lock rows); the reads that stay Prisma model queries take the `Client`.
import type { Client, Db, Tx } from "../db";
import { Prisma } from "../generated/prisma/client";
import type { HeldReason } from "../gateway/policy";
import type { HistoryFilter, QueueFilters, QueueSort } from "./filters";

/** The tenant's thresholds the desk applies when a supervisor approves. */
export interface DeskPolicy {
  stepUpAboveCents: number;
  twoPersonAboveCents: number;
}

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

export interface LinkedRequest {
  id: string;
  status: string;
  toolName: string;
  orderId: string;
  impactCents: number;
  /** What approving now approves: the first of two approvers' amount, else the proposal's. */
  approvingCents: number;
  currency: string;
  arguments: Record<string, unknown>;
  orderStatus: string;
  orderTotalCents: number;
  orderRefundedCents: number;
  conversationId: string;
  originCallId: string;
  customerEmail: string | null;
  requestedBy: string;
  decidedBy: string | null;
  decidedAt: Date | null;
  resultCode: string | null;
  note: string | null;
  createdAt: Date;
  expiresAt: Date;
}

// Requests

/** The request row a decision works on, as locked by `lockRequest`. */
export interface LockedRequest {
  id: string;
  tenantId: string;
  conversationId: string;
  originCallId: string;
  toolName: string;
  orderId: string;
  argsHash: string;
  impactCents: number;
  status: string;
  requestedById: string;
  expiresAt: Date;
  firstApproverId: string | null;
  firstApprovedArgs: unknown;
  firstStepUpMethod: string | null;
  /** The earlier calls the request's card names as possible duplicates (the duplicate-intent guard). */
  shownDuplicates: string[];
}

/** Where a tenant's request sits (its conversation, tool and call), read without a lock; null when there is none. */
export async function locateRequest(db: Client, approvalId: string, tenantId: string) {
  return db.approvalRequest.findFirst({
    where: { id: approvalId, tenantId },
    select: { conversationId: true, toolName: true, originCallId: true },
  });
}

/** Locks a tenant's request until the transaction ends and returns it; undefined when there is none. */
export async function lockRequest(tx: Tx, approvalId: string, tenantId: string): Promise<LockedRequest | undefined> {
  const [request] = await tx.$queryRaw<LockedRequest[]>`
    SELECT "id", "tenantId", "conversationId", "originCallId", "toolName", "orderId", "argsHash", "impactCents",
           "status", "requestedById", "expiresAt", "firstApproverId", "firstApprovedArgs", "firstStepUpMethod",
           ARRAY(SELECT held ->> 'of_call_id' FROM jsonb_array_elements(COALESCE("preview" -> 'held', '[]'::jsonb)) AS held
                 WHERE held ->> 'rule' = 'possible_duplicate') AS "shownDuplicates"
    FROM "ApprovalRequest" WHERE "id" = ${approvalId} AND "tenantId" = ${tenantId} FOR UPDATE`;
  return request;
}

/** Adds a reason to the request's card (its preview's `held` list), as the next supervisor to open it reads it. */
export async function addHeldReason(tx: Tx, approvalId: string, reason: HeldReason): Promise<void> {
  await tx.$executeRaw`
    UPDATE "ApprovalRequest"
    SET "preview" = jsonb_set("preview", '{held}', COALESCE("preview" -> 'held', '[]'::jsonb) || jsonb_build_array(${JSON.stringify(reason)}::jsonb))
    WHERE "id" = ${approvalId}`;
}

/** The call a request was made for, with the arguments it binds; null when it is gone. */
export async function findOriginCall(
  db: Db,
  callId: string,
): Promise<{
  id: string;
  toolName: string;
  conversationId: string;
  argsCanonical: string | null;
  argsHash: string | null;
  orderId: string | null;
} | null> {
  const [call] = await db.$queryRaw<
    {
      id: string;
      toolName: string;
      conversationId: string;
      argsCanonical: string | null;
      argsHash: string | null;
      orderId: string | null;
    }[]
  >`
    SELECT "id", "toolName", "conversationId", "argsCanonical", "argsHash", "orderId" FROM "ToolCall" WHERE "id" = ${callId}`;
  return call ?? null;
}

/** Keeps the first of two approvals on the request: who, when, the arguments approved and how they proved it. */
export async function markFirstApproval(
  tx: Tx,
  approvalId: string,
  first: { approverId: string; approved: Record<string, unknown>; stepUp: string | null },
): Promise<void> {
  await tx.$executeRaw`
    UPDATE "ApprovalRequest"
    SET "firstApproverId" = ${first.approverId}, "firstApprovedAt" = ${new Date().toISOString()}::timestamptz,
        "firstApprovedArgs" = ${JSON.stringify(first.approved)}::jsonb, "firstStepUpMethod" = ${first.stepUp}::text
    WHERE "id" = ${approvalId}`;
}

/**
 * Closes the request with its decision (and, for an approval, the arguments approved and the step-up used);
 * returns when the request was made.
 */
export async function markDecided(
  tx: Tx,
  approvalId: string,
  decision: {
    status: string;
    deciderId: string;
    note: string | null;
    resultCode: string;
    approval: { approved: Record<string, unknown>; stepUp: string | null } | null;
  },
): Promise<Date> {
  const { approval } = decision;
  const [row] = await tx.$queryRaw<{ createdAt: Date }[]>`
    UPDATE "ApprovalRequest"
    SET "status" = ${decision.status}, "decidedById" = ${decision.deciderId},
        "decidedAt" = ${new Date().toISOString()}::timestamptz, "note" = ${decision.note}::text,
        "resultCode" = ${decision.resultCode},
        "approvedArgs" = CASE WHEN ${approval !== null}::boolean THEN ${approval ? JSON.stringify(approval.approved) : null}::jsonb ELSE "approvedArgs" END,
        "stepUpMethod" = CASE WHEN ${approval !== null}::boolean THEN ${approval?.stepUp ?? null}::text ELSE "stepUpMethod" END
    WHERE "id" = ${approvalId}
    RETURNING "createdAt"`;
  if (!row) throw new Error(`approval request ${approvalId} vanished while it was locked`);
  return row.createdAt;
}

/** Up to 500 pending requests (of one tenant, or of all) past their expiry: their ids. */
export async function findDueRequests(db: Client, tenantId: string | undefined) {
  return db.approvalRequest.findMany({
    where: { ...(tenantId ? { tenantId } : {}), status: "pending", expiresAt: { lte: new Date() } },
    select: { id: true },
    take: 500,
  });
}

/** A request's conversation, status and expiry; null when there is none. */
export async function findExpiry(db: Client, approvalId: string) {
  return db.approvalRequest.findUnique({
    where: { id: approvalId },
    select: { conversationId: true, status: true, expiresAt: true },
  });
}

/**
 * Marks as warned (up to 200 at a time, skipping rows another instance holds) every pending, unwarned request that
 * expires within its tenant's warning time, of one tenant or of all; returns what the warning says about each.
 */
export async function markExpiryWarned(tx: Tx, tenantId: string | undefined) {
  return tx.$queryRaw<
    {
      id: string;
      tenantId: string;
      toolName: string;
      orderId: string;
      impactCents: number;
      currency: string;
      expiresAt: Date;
    }[]
  >`
    UPDATE "ApprovalRequest" r SET "expiryNotifiedAt" = now()
    FROM "Tenant" t
    WHERE t."id" = r."tenantId" AND t."expiryWarningSeconds" > 0 AND r."status" = 'pending' AND r."expiryNotifiedAt" IS NULL
      AND r."expiresAt" > now() AND r."expiresAt" <= now() + make_interval(secs => t."expiryWarningSeconds")
      AND (${tenantId ?? null}::text IS NULL OR r."tenantId" = ${tenantId ?? null}::text)
      AND r."id" IN (SELECT "id" FROM "ApprovalRequest" WHERE "status" = 'pending' AND "expiryNotifiedAt" IS NULL ORDER BY "expiresAt" LIMIT 200 FOR UPDATE SKIP LOCKED)
    RETURNING r."id", r."tenantId", r."toolName", r."orderId", r."impactCents", r."preview"->'impact'->>'currency' AS "currency", r."expiresAt"`;
}

// The queue

/** The columns a queue or history row shows, with the ids of the people named in it. */
const ITEM_SELECT = {
  id: true,
  createdAt: true,
  expiresAt: true,
  status: true,
  toolName: true,
  orderId: true,
  impactCents: true,
  preview: true,
  conversationId: true,
  originCallId: true,
  requestedById: true,
  decidedById: true,
  decidedAt: true,
  note: true,
  resultCode: true,
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

/** One page of a tenant's decided and expired requests, newest first, strictly before `before`. */
export async function findDecidedPage(
  db: Client,
  tenantId: string,
  page: { before?: { createdAt: Date; id: string }; take: number },
) {
  const { before } = page;
  return db.approvalRequest.findMany({
    where: {
      tenantId,
      status: { not: "pending" },
      ...(before
        ? { OR: [{ createdAt: { lt: before.createdAt } }, { createdAt: before.createdAt, id: { lt: before.id } }] }
        : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: page.take,
    select: ITEM_SELECT,
  });
}

/** How many of a tenant's requests can still be decided now. */
export async function countPending(db: Client, tenantId: string): Promise<number> {
  return db.approvalRequest.count({ where: actionable(tenantId) });
}

/** A tenant's pending requests in numbers: how many, the newest one's time and the latest first approval's. */
export async function pendingStamp(db: Db, tenantId: string) {
  const [row] = await db.$queryRaw<{ pending: number; newest: Date | null; firsts: Date | null }[]>`
    SELECT count(*)::int AS "pending", max("createdAt") AS "newest", max("firstApprovedAt") AS "firsts"
    FROM "ApprovalRequest" WHERE "tenantId" = ${tenantId} AND "status" = 'pending'`;
  return row;
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
  return db.$queryRaw<{ id: string; orderId: string; impactCents: number; toolName: string; onOrder: number }[]>`
    SELECT r."id", r."orderId", r."impactCents", r."toolName", n."onOrder"
    FROM unnest(${orderIds}::text[]) AS o("orderId")
    CROSS JOIN LATERAL (
      SELECT count(*)::int AS "onOrder"
      FROM (SELECT 1 FROM "ApprovalRequest" WHERE ${onOrder} LIMIT ${countUpTo}::int) counted
    ) n
    CROSS JOIN LATERAL (
      SELECT "id", "orderId", "impactCents", "toolName" FROM "ApprovalRequest" WHERE ${onOrder}
      ORDER BY "createdAt", "id" LIMIT ${perOrder}::int
    ) r`;
}

/** The tenant's people among `ids`: names and emails. */
export async function findTenantPeople(db: Client, tenantId: string, ids: string[]) {
  return db.user.findMany({ where: { id: { in: ids }, tenantId }, select: { id: true, name: true, email: true } });
}

/** The emails of the people among `ids`. */
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

/** The tenant's supervisors and agents by name then email, with their roles. */
export async function findDecidersAndAgents(db: Client, tenantId: string) {
  return db.user.findMany({
    where: { tenantId, role: { in: ["SUPERVISOR", "AGENT"] } },
    orderBy: [{ name: "asc" }, { email: "asc" }],
    select: { id: true, email: true, name: true, role: true },
  });
}

/** The tenant's thresholds for step-up and for two approvers; undefined when there is no such tenant. */
export async function findDeskPolicy(db: Db, tenantId: string): Promise<DeskPolicy | undefined> {
  const [desk] = await db.$queryRaw<DeskPolicy[]>`
    SELECT "stepUpAboveCents", "twoPersonAboveCents" FROM "Tenant" WHERE "id" = ${tenantId}`;
  return desk;
}

// History

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
    const escaped = filter.q.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`);
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

// Links

/** A link as its page and its post check it. */
export interface LinkRow {
  linkId: string;
  recipientId: string;
  linkExpiresAt: Date;
  usedAt: Date | null;
  approvalId: string;
}

/** Stores one link per recipient (only each token's hash), dead when the request expires. */
export async function insertLinks(
  db: Db,
  approval: { id: string; tenantId: string; expiresAt: Date },
  links: { id: string; recipientId: string; tokenHash: string }[],
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ApprovalLink" ("id", "tenantId", "approvalId", "recipientId", "tokenHash", "expiresAt")
    SELECT link."id", ${approval.tenantId}, ${approval.id}, link."recipientId", link."tokenHash", ${approval.expiresAt.toISOString()}::timestamptz
    FROM jsonb_to_recordset(${JSON.stringify(links)}::jsonb) AS link("id" text, "recipientId" text, "tokenHash" text)`;
}

/** The tenant's link whose token hashes to `tokenHash`; undefined when there is none. */
export async function findLinkByHash(db: Db, tenantId: string, tokenHash: string): Promise<LinkRow | undefined> {
  const [row] = await db.$queryRaw<LinkRow[]>`
    SELECT "id" AS "linkId", "recipientId", "expiresAt" AS "linkExpiresAt", "usedAt", "approvalId"
    FROM "ApprovalLink" WHERE "tokenHash" = ${tokenHash} AND "tenantId" = ${tenantId}`;
  return row;
}

/**
 * Uses the link up if it is still unused and unexpired, in this one statement (a racing post claims it at most
 * once); returns whether it did.
 */
export async function claimLink(db: Db, linkId: string): Promise<boolean> {
  const claimed = await db.$executeRaw`
    UPDATE "ApprovalLink" SET "usedAt" = ${new Date().toISOString()}::timestamptz
    WHERE "id" = ${linkId} AND "usedAt" IS NULL AND "expiresAt" > ${new Date().toISOString()}::timestamptz`;
  return claimed > 0;
}

/** Gives a claimed link back, but only while its request is still pending. */
export async function releaseLink(db: Db, linkId: string, approvalId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "ApprovalLink" SET "usedAt" = NULL
    WHERE "id" = ${linkId} AND EXISTS (SELECT 1 FROM "ApprovalRequest" WHERE "id" = ${approvalId} AND "status" = 'pending')`;
}

/** What a link's page shows of the tenant's request: the request, its order now and the people; undefined if none. */
export async function findLinkedRequest(
  db: Db,
  tenantId: string,
  approvalId: string,
): Promise<LinkedRequest | undefined> {
  const [request] = await db.$queryRaw<LinkedRequest[]>`
    SELECT a."id", a."status", a."toolName", a."orderId", a."impactCents",
           coalesce((a."firstApprovedArgs"->>'amount_cents')::int, (a."preview"->'impact'->>'amount_cents')::int, a."impactCents") AS "approvingCents",
           a."preview"->'impact'->>'currency' AS "currency",
           a."preview"->'arguments' AS "arguments", o."status" AS "orderStatus", o."totalCents" AS "orderTotalCents",
           o."refundedCents" AS "orderRefundedCents", a."conversationId", a."originCallId", cu."email" AS "customerEmail",
           requester."name" || ' (' || requester."email" || ')' AS "requestedBy",
           decider."name" || ' (' || decider."email" || ')' AS "decidedBy", a."decidedAt", a."resultCode", a."note",
           a."createdAt", a."expiresAt"
    FROM "ApprovalRequest" a
    JOIN "Order" o ON o."id" = a."orderId" AND o."tenantId" = a."tenantId"
    LEFT JOIN "Customer" cu ON cu."id" = o."customerId"
    LEFT JOIN "User" requester ON requester."id" = a."requestedById"
    LEFT JOIN "User" decider ON decider."id" = a."decidedById"
    WHERE a."id" = ${approvalId} AND a."tenantId" = ${tenantId}`;
  return request;
}

// Notices

/**
 * Whom a new request is announced to: the tenant's webhook, the customer's email (when the customer is the
 * tenant's) and its active supervisors by email; undefined when there is no such tenant.
 */
export async function findRequestAudience(db: Db, tenantId: string, customerId: string) {
  const [tenant] = await db.$queryRaw<
    { webhookUrl: string | null; customerEmail: string | null; supervisors: { id: string; email: string }[] }[]
  >`
    SELECT t."webhookUrl",
           (SELECT cu."email" FROM "Customer" cu WHERE cu."id" = ${customerId} AND cu."tenantId" = t."id") AS "customerEmail",
           COALESCE((SELECT json_agg(json_build_object('id', u."id", 'email', u."email") ORDER BY u."email") FROM "User" u
                     WHERE u."tenantId" = t."id" AND u."role" = 'SUPERVISOR' AND u."active"), '[]'::json) AS "supervisors"
    FROM "Tenant" t WHERE t."id" = ${tenantId}`;
  return tenant;
}

/** The emails of the tenant's active admins, in order. */
export async function findAdminEmails(db: Db, tenantId: string): Promise<{ email: string }[]> {
  return db.$queryRaw<{ email: string }[]>`
    SELECT "email" FROM "User" WHERE "tenantId" = ${tenantId} AND "role" = 'ADMIN' AND "active" ORDER BY "email" ASC`;
}
