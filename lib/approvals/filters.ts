import { z } from "zod";
import { QUEUE_SORTS, type QueueFilters } from "./queue";

// The queue's filters as they travel in the address bar: money in currency units, age in minutes.

const Money = z
  .string()
  .trim()
  .regex(/^\d{1,7}([.,]\d{1,2})?$/)
  .transform((text) => Math.round(Number(text.replace(",", ".")) * 100));

const FiltersSchema = z.object({
  agent: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/)
    .optional()
    .catch(undefined),
  tool: z
    .string()
    .regex(/^[a-z_]{1,60}$/)
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
