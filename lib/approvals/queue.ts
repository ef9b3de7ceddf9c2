import "server-only";
import { db } from "../db";
import { expireApproval } from "../gateway/approval";
import { lockConversation } from "../gateway/lock";
import type { ApprovalPreview } from "../gateway/approval";

/** Closes one request if it is past its expiry, taking locks in the order every writer uses. */
export async function expireIfDue(approvalId: string): Promise<boolean> {
  const request = await db.approvalRequest.findUnique({ where: { id: approvalId }, select: { conversationId: true, status: true, expiresAt: true } });
  if (!request || request.status !== "pending" || request.expiresAt > new Date()) return false;
  return db.$transaction(async (tx) => {
    await lockConversation(tx, { id: request.conversationId });
    return expireApproval(tx, approvalId);
  });
}

/** Every pending request of the tenant past its expiry becomes expired, and so do the calls waiting on it. */
export async function expireDue(tenantId: string): Promise<number> {
  const due = await db.approvalRequest.findMany({
    where: { tenantId, status: "pending", expiresAt: { lte: new Date() } },
    select: { id: true },
    take: 500,
  });
  let expired = 0;
  for (const { id } of due) if (await expireIfDue(id)) expired++;
  return expired;
}

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
