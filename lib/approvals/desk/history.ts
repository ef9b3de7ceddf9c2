import { db } from "../../db";
import type { HistoryFilter } from "./filters";
import { findDecidedHistory, findDecidersAndAgents, type HistoryItem } from "./sql";

export interface HistoryPage {
  items: HistoryItem[];
  /** The cursor of the next (older) page, when there is one. */
  next: string | null;
}

const PAGE_SIZE = 50;

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
