// The statements of the links in approval emails: one per recipient, claimed once, and the request a link shows.
import type { Db } from "../../db";
import type { HeldReason } from "../../gateway";

/** A link as its page and its post check it. */
export interface LinkRow {
  linkId: string;
  recipientId: string;
  linkExpiresAt: Date;
  usedAt: Date | null;
  approvalId: string;
}

export interface LinkedRequest {
  id: string;
  status: string;
  toolName: string;
  orderId: string;
  impactCents: number;
  /** What approving now approves: the first of two approvers' amount, else the proposal's. */
  approvingCents: number;
  /** The amount approved, once the request is: lower than the proposal's when a supervisor lowered it. */
  approvedCents: number | null;
  currency: string;
  arguments: Record<string, unknown>;
  /** Why the call was held, as its card says it (the preview's reasons; none for a request without them). */
  held: HeldReason[];
  orderStatus: string;
  orderTotalCents: number;
  orderRefundedCents: number;
  conversationId: string;
  originCallId: string;
  customerEmail: string | null;
  requestedBy: string;
  /** The first of two approvers, while the request waits for the second: who, and when. */
  firstApprovedBy: string | null;
  firstApprovedAt: Date | null;
  decidedBy: string | null;
  decidedById: string | null;
  decidedAt: Date | null;
  resultCode: string | null;
  note: string | null;
  createdAt: Date;
  expiresAt: Date;
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

/** The tenant's link whose token hashes to `tokenHash`; null when there is none. */
export async function findLinkByHash(db: Db, tenantId: string, tokenHash: string): Promise<LinkRow | null> {
  const [row] = await db.$queryRaw<LinkRow[]>`
    SELECT "id" AS "linkId", "recipientId", "expiresAt" AS "linkExpiresAt", "usedAt", "approvalId"
    FROM "ApprovalLink" WHERE "tokenHash" = ${tokenHash} AND "tenantId" = ${tenantId}`;
  return row ?? null;
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

/** What a link's page shows of the tenant's request: the request, its order now and the people; null if none. */
export async function findLinkedRequest(db: Db, tenantId: string, approvalId: string): Promise<LinkedRequest | null> {
  const [request] = await db.$queryRaw<LinkedRequest[]>`
    SELECT a."id", a."status", a."toolName", a."orderId", a."impactCents",
           coalesce((a."firstApprovedArgs"->>'amount_cents')::int, (a."preview"->'impact'->>'amount_cents')::int, a."impactCents") AS "approvingCents",
           (a."approvedArgs"->>'amount_cents')::int AS "approvedCents",
           a."preview"->'impact'->>'currency' AS "currency",
           a."preview"->'arguments' AS "arguments",
           CASE WHEN jsonb_typeof(a."preview"->'held') = 'array' THEN a."preview"->'held' ELSE '[]'::jsonb END AS "held",
           o."status" AS "orderStatus", o."totalCents" AS "orderTotalCents",
           o."refundedCents" AS "orderRefundedCents", a."conversationId", a."originCallId", cu."email" AS "customerEmail",
           requester."name" || ' (' || requester."email" || ')' AS "requestedBy",
           approver1."name" || ' (' || approver1."email" || ')' AS "firstApprovedBy", a."firstApprovedAt",
           decider."name" || ' (' || decider."email" || ')' AS "decidedBy", a."decidedById", a."decidedAt", a."resultCode", a."note",
           a."createdAt", a."expiresAt"
    FROM "ApprovalRequest" a
    JOIN "Order" o ON o."id" = a."orderId" AND o."tenantId" = a."tenantId"
    LEFT JOIN "Customer" cu ON cu."id" = o."customerId"
    LEFT JOIN "User" requester ON requester."id" = a."requestedById"
    LEFT JOIN "User" approver1 ON approver1."id" = a."firstApproverId"
    LEFT JOIN "User" decider ON decider."id" = a."decidedById"
    WHERE a."id" = ${approvalId} AND a."tenantId" = ${tenantId}`;
  return request ?? null;
}
