import { cache } from "react";
import { db } from "../../db";
import type { ApprovalPreview } from "../../gateway";
import type { UpstreamPreview } from "../../upstream/calls/preview";
import type { QueueFilters, QueueSort } from "./filters";
import { findEmails, findPendingPage, pendingNumbers } from "./sql";

/** A request waiting for a decision, as the desk shows it. */
export interface QueueItem {
  id: string;
  createdAt: Date;
  expiresAt: Date;
  toolName: string;
  orderId: string;
  impactCents: number;
  /** An upstream tool's request has its own preview (lib/upstream/calls/preview.ts). */
  preview: ApprovalPreview | UpstreamPreview;
  conversationId: string;
  originCallId: string;
  /** The asking agent's email, or their id when they are gone. */
  requestedBy: string;
}

async function withNames(rows: Array<Record<string, unknown> & { requestedById: string }>): Promise<QueueItem[]> {
  const users = await findEmails(db, [...new Set(rows.map((row) => row.requestedById))]);
  const email = new Map(users.map((user) => [user.id, user.email]));
  return rows.map(({ requestedById, ...row }) => ({
    ...(row as unknown as Omit<QueueItem, "requestedBy">),
    requestedBy: email.get(requestedById) ?? requestedById,
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

function parseQueueCursor(
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

/**
 * What changes when a request arrives, is decided or closed by the expiry job, or gets its first of two approvals:
 * the live view compares it between polls. It does not change the moment a request's time runs out, so an expired
 * card stays on the desk, its buttons disabled, until the expiry job closes it. `pending` is the number in the
 * navigation: the requests that can still be decided.
 */
export async function queueStamp(tenantId: string): Promise<{ pending: number; stamp: string }> {
  const row = await pendingNumbers(db, tenantId);
  return {
    pending: row.actionable,
    stamp: `${row.open}:${row.newest?.toISOString() ?? ""}:${row.firsts?.toISOString() ?? ""}`,
  };
}

/** `queueStamp` read once per page render: the navigation's count and the desk's stamp share one statement. */
export const renderedQueueStamp = cache(queueStamp);
