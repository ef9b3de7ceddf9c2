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

/** The tenant's pending queue, oldest first. Expired requests are closed first so they never show as actionable. */
export async function pendingQueue(tenantId: string, limit = 100): Promise<QueueItem[]> {
  await expireDue(tenantId);
  const rows = await db.approvalRequest.findMany({
    where: { tenantId, status: "pending" },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: limit,
    select: ITEM_SELECT,
  });
  return withNames(rows);
}

/** Decided and expired requests, newest first. */
export async function decidedHistory(tenantId: string, limit = 100): Promise<QueueItem[]> {
  await expireDue(tenantId);
  const rows = await db.approvalRequest.findMany({
    where: { tenantId, status: { not: "pending" } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit,
    select: ITEM_SELECT,
  });
  return withNames(rows);
}
