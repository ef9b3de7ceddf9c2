import "server-only";
import { z } from "zod";
import { db } from "../db";
import { findDecidedHistory, findDecidersAndAgents } from "./sql";

export const HISTORY_OUTCOMES = ["approved", "denied", "failed", "expired", "withdrawn"] as const;

const Day = z
  .string()
  .regex(/^\d{4}-\d\d-\d\d$/)
  .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)));
const Empty = z.literal("").transform(() => undefined);

/** The history page's query string, re-validated here: a bad value is dropped, never sent to the database. */
export const HistoryFilterSchema = z.object({
  outcome: z.enum(HISTORY_OUTCOMES).or(Empty).optional().catch(undefined),
  decider: z.string().max(100).optional().catch(undefined),
  agent: z.string().max(100).optional().catch(undefined),
  from: Day.or(Empty).optional().catch(undefined),
  to: Day.or(Empty).optional().catch(undefined),
  q: z.string().trim().max(200).optional().catch(undefined),
  before: z
    .string()
    .regex(/^\d{4}-\d\d-\d\dT[\d:.]+Z_apr_[A-Za-z0-9_-]+$/)
    .optional()
    .catch(undefined),
});
export type HistoryFilter = z.infer<typeof HistoryFilterSchema>;

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

export interface HistoryPage {
  items: HistoryItem[];
  /** The cursor of the next (older) page, when there is one. */
  next: string | null;
}

export const PAGE_SIZE = 50;

const cursorOf = (item: { decidedAt: Date; id: string }) => `${item.decidedAt.toISOString()}_${item.id}`;

/**
 * Decided and expired requests of one tenant, newest decision first, filtered in SQL and paged by keyset on
 * (decidedAt, id) over the partial index of decided requests: no OFFSET, so the thousandth page costs what
 * the first does. The search matches an order, call or request id exactly, or the start of a customer's email.
 */
export async function decisionHistory(
  tenantId: string,
  filter: HistoryFilter,
  limit = PAGE_SIZE,
): Promise<HistoryPage> {
  const rows = await findDecidedHistory(db, tenantId, filter, limit + 1);
  const items = rows.slice(0, limit);
  return { items, next: rows.length > limit ? cursorOf(items[items.length - 1]) : null };
}

/** The people the history can be filtered by: the tenant's supervisors (deciders) and agents (requesters). */
export async function historyPeople(tenantId: string) {
  const people = await findDecidersAndAgents(db, tenantId);
  return {
    deciders: people.filter((person) => person.role === "SUPERVISOR"),
    agents: people.filter((person) => person.role === "AGENT"),
  };
}
