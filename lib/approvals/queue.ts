import "server-only";
import { db } from "../db";
import type { ApprovalPreview } from "../gateway/approval";
import { expireDue } from "./expiry";

export interface QueueItem {
  id: string;
  createdAt: Date;
  expiresAt: Date;
  status: string;
  toolName: string;
  orderId: string;
  impactCents: number;
  preview: ApprovalPreview;
  conversationId: string;
  requestedBy: string;
  decidedBy: string | null;
  decidedAt: Date | null;
  note: string | null;
  resultCode: string | null;
}

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
  requestedById: true,
  decidedById: true,
  decidedAt: true,
  note: true,
  resultCode: true,
} as const;

async function withNames(rows: Array<Record<string, unknown> & { requestedById: string; decidedById: string | null }>): Promise<QueueItem[]> {
  const ids = [...new Set(rows.flatMap((row) => [row.requestedById, row.decidedById].filter((id): id is string => id !== null)))];
  const users = await db.user.findMany({ where: { id: { in: ids } }, select: { id: true, email: true } });
  const email = new Map(users.map((user) => [user.id, user.email]));
  return rows.map(({ requestedById, decidedById, ...row }) => ({
    ...(row as unknown as Omit<QueueItem, "requestedBy" | "decidedBy">),
    requestedBy: email.get(requestedById) ?? requestedById,
    decidedBy: decidedById ? (email.get(decidedById) ?? decidedById) : null,
  }));
}

/** Where a page of the queue ends: the next page starts strictly after it (keyset pagination, no OFFSET). */
export interface QueueCursor {
  createdAt: Date;
  id: string;
}

export function parseCursor(value: string | undefined): QueueCursor | undefined {
  const match = /^(\d{4}-\d\d-\d\dT[\d:.]+Z)_(apr_[A-Za-z0-9_-]+)$/.exec(value ?? "");
  const createdAt = new Date(match?.[1] ?? "");
  // A cursor naming no real time (month 99) reads as no cursor, not as a query the database refuses.
  return match && !Number.isNaN(createdAt.getTime()) ? { createdAt, id: match[2] } : undefined;
}

export const formatCursor = (item: { createdAt: Date; id: string }) => `${item.createdAt.toISOString()}_${item.id}`;

/**
 * The tenant's pending queue, oldest first, one page at a time, on the (tenantId, status, createdAt) index.
 * Expired requests are closed first so they never show as actionable.
 */
export async function pendingQueue(tenantId: string, options: { after?: QueueCursor; limit?: number } = {}): Promise<QueueItem[]> {
  await expireDue(tenantId);
  const { after } = options;
  const rows = await db.approvalRequest.findMany({
    where: {
      tenantId,
      status: "pending",
      ...(after ? { OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] } : {}),
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: options.limit ?? 50,
    select: ITEM_SELECT,
  });
  return withNames(rows);
}

/** Decided and expired requests, newest first, one page at a time. */
export async function decidedHistory(tenantId: string, options: { before?: QueueCursor; limit?: number } = {}): Promise<QueueItem[]> {
  await expireDue(tenantId);
  const { before } = options;
  const rows = await db.approvalRequest.findMany({
    where: {
      tenantId,
      status: { not: "pending" },
      ...(before ? { OR: [{ createdAt: { lt: before.createdAt } }, { createdAt: before.createdAt, id: { lt: before.id } }] } : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: options.limit ?? 50,
    select: ITEM_SELECT,
  });
  return withNames(rows);
}
