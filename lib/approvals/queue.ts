import "server-only";
import { db } from "../db";
import type { ApprovalPreview } from "../gateway/approval";
import type { QueueFilters, QueueSort } from "./filters";
import { countPending, findDecidedPage, findEmails, findPendingPage, pendingStamp } from "./sql";

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
  originCallId: string;
  requestedBy: string;
  decidedBy: string | null;
  decidedAt: Date | null;
  note: string | null;
  resultCode: string | null;
}

async function withNames(
  rows: Array<Record<string, unknown> & { requestedById: string; decidedById: string | null }>,
): Promise<QueueItem[]> {
  const ids = [
    ...new Set(rows.flatMap((row) => [row.requestedById, row.decidedById].filter((id): id is string => id !== null))),
  ];
  const users = await findEmails(db, ids);
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

/** Where a page ends in a given sort: the sort key and the id, so the next page starts strictly after it. */
export function formatQueueCursor(
  item: { createdAt: Date; expiresAt: Date; impactCents: number; id: string },
  sort: QueueSort = "oldest",
): string {
  const key =
    sort === "largest"
      ? String(item.impactCents)
      : (sort === "expiring" ? item.expiresAt : item.createdAt).toISOString();
  return `${key}_${item.id}`;
}

export function parseQueueCursor(
  value: string | undefined,
  sort: QueueSort = "oldest",
): { key: Date | number; id: string } | undefined {
  const match = /^([0-9TZ:.-]{1,30})_(apr_[A-Za-z0-9_-]{1,60})$/.exec(value ?? "");
  if (!match) return undefined;
  if (sort === "largest") return /^\d{1,9}$/.test(match[1]) ? { key: Number(match[1]), id: match[2] } : undefined;
  const at = new Date(match[1]);
  return Number.isNaN(at.getTime()) ? undefined : { key: at, id: match[2] };
}

/**
 * The tenant's pending queue, filtered and sorted, one page at a time with keyset pagination (no OFFSET).
 * A request past its expiry is never shown as actionable; reading writes nothing (the expiry job closes it).
 */
export async function pendingQueue(
  tenantId: string,
  options: { after?: QueueCursor; cursor?: string; limit?: number; filters?: QueueFilters } = {},
): Promise<QueueItem[]> {
  const filters = options.filters ?? {};
  const sort = filters.sort ?? "oldest";
  const cursor = options.after
    ? { key: options.after.createdAt, id: options.after.id }
    : parseQueueCursor(options.cursor, sort);
  const rows = await findPendingPage(db, tenantId, { filters, sort, cursor, take: options.limit ?? 50 });
  return withNames(rows);
}

/** How many requests wait for a decision: the number in the navigation. */
export async function pendingCount(tenantId: string): Promise<number> {
  return countPending(db, tenantId);
}

/** Decided and expired requests, newest first, one page at a time. */
export async function decidedHistory(
  tenantId: string,
  options: { before?: QueueCursor; limit?: number } = {},
): Promise<QueueItem[]> {
  const rows = await findDecidedPage(db, tenantId, { before: options.before, take: options.limit ?? 50 });
  return withNames(rows);
}

/** What changes when a request arrives or leaves the queue: the live view compares it between polls. */
export async function queueStamp(tenantId: string): Promise<{ pending: number; stamp: string }> {
  const row = await pendingStamp(db, tenantId);
  return {
    pending: row.pending,
    stamp: `${row.pending}:${row.newest?.toISOString() ?? ""}:${row.firsts?.toISOString() ?? ""}`,
  };
}
