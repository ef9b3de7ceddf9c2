import { z } from "zod";
import { centsOfTyped } from "../../money";

// What a person may ask the queue and the history for, as it travels in the address bar: money in currency units,
// age in minutes, days as dates.

const QUEUE_SORTS = ["oldest", "newest", "expiring", "largest"] as const;
export type QueueSort = (typeof QUEUE_SORTS)[number];

export interface QueueFilters {
  agentId?: string;
  tool?: string;
  minCents?: number;
  maxCents?: number;
  /** Only requests waiting at least this many minutes. */
  olderThanMinutes?: number;
  /** An order id, a customer id or email, a call id or a request id. */
  search?: string;
  sort?: QueueSort;
}

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

const Money = z.string().transform((text, context) => {
  const cents = centsOfTyped(text);
  if (cents === null) context.addIssue({ code: "custom", message: "not an amount" });
  return cents ?? z.NEVER;
});

const FiltersSchema = z.object({
  agent: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/)
    .optional()
    .catch(undefined),
  tool: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,100}$/)
    .optional()
    .catch(undefined),
  min: Money.optional().catch(undefined),
  max: Money.optional().catch(undefined),
  age: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 60)
    .optional()
    .catch(undefined),
  q: z.string().trim().max(200).optional().catch(undefined),
  sort: z.enum(QUEUE_SORTS).optional().catch(undefined),
});

/** Unreadable values are dropped, never an error page: a hand-edited address still shows the queue. */
export function parseQueueFilters(params: Record<string, string | string[] | undefined>): QueueFilters {
  const single = Object.fromEntries(
    Object.entries(params).map(([key, value]) => [key, Array.isArray(value) ? value[0] : value || undefined]),
  );
  const parsed = FiltersSchema.parse(single);
  return {
    agentId: parsed.agent,
    tool: parsed.tool,
    minCents: parsed.min,
    maxCents: parsed.max,
    olderThanMinutes: parsed.age,
    search: parsed.q || undefined,
    sort: parsed.sort,
  };
}

export function queueSearchParams(filters: QueueFilters, after: string | null): string {
  const params = new URLSearchParams();
  if (filters.agentId) params.set("agent", filters.agentId);
  if (filters.tool) params.set("tool", filters.tool);
  if (filters.minCents !== undefined) params.set("min", (filters.minCents / 100).toFixed(2));
  if (filters.maxCents !== undefined) params.set("max", (filters.maxCents / 100).toFixed(2));
  if (filters.olderThanMinutes !== undefined) params.set("age", String(filters.olderThanMinutes));
  if (filters.search) params.set("q", filters.search);
  if (filters.sort) params.set("sort", filters.sort);
  if (after) params.set("after", after);
  return params.toString();
}
