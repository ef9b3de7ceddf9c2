import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import { outcome, type Outcome } from "./outcome";
import type { ConversationFacts, TenantPolicy } from "./types";

export type RateResult = { ok: true } | { ok: false; outcome: Outcome; retryAfterSeconds: number };

/** A bucket as the call's count left it. */
export interface RateCount {
  key: string;
  count: number;
  retryAfter: number;
}

/**
 * Counts one call in fixed one-minute windows per conversation ("c:" and its id) and per API key ("k:" and its
 * id), in PostgreSQL so that every app instance shares them. `keys` is a text[] expression of the buckets; an
 * empty or null array counts nothing. Both buckets move in one statement, always in the same key order ("c:"
 * before "k:"), so concurrent callers cannot deadlock. Also run inside the agent API's key lookup
 * (`authenticateForConversation`), which saves a call its own round trip.
 */
export function countCall(keys: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "RateBucket" ("key", "windowStart", "count")
    SELECT DISTINCT bucket, date_trunc('minute', now()), 1 FROM unnest(${keys}) AS bucket
    ORDER BY bucket
    ON CONFLICT ("key") DO UPDATE SET
      "count" = CASE WHEN "RateBucket"."windowStart" = EXCLUDED."windowStart" THEN "RateBucket"."count" + 1 ELSE 1 END,
      "windowStart" = EXCLUDED."windowStart"
    RETURNING "key", "count", CEIL(EXTRACT(EPOCH FROM ("windowStart" + interval '1 minute' - now())))::int AS "retryAfter"`;
}

/**
 * Stage 1, the one place every entry (HTTP, batch, MCP, the browser console) counts a call and decides its rate:
 * the call's conversation and key against their limits, before the body is parsed. The call is counted here
 * unless the agent API's key lookup already counted it in its own statement (`counted`, the buckets as that
 * statement left them; a batch hands them to its first call only).
 */
export async function countAndLimitCall(
  client: Db,
  conversation: ConversationFacts,
  apiKeyId: string | null,
  policy: TenantPolicy,
  counted?: RateCount[],
): Promise<RateResult> {
  const conversationKey = `c:${conversation.id}`;
  const apiKey = apiKeyId ? `k:${apiKeyId}` : conversationKey;
  const rows =
    counted ??
    (await client.$queryRaw<RateCount[]>(countCall(Prisma.sql`ARRAY[${conversationKey}::text, ${apiKey}::text]`)));
  for (const row of rows) {
    const limit = row.key === conversationKey ? policy.rateConversationPerMin : policy.rateKeyPerMin;
    if (row.count > limit)
      return { ok: false, outcome: outcome("rate.limited"), retryAfterSeconds: Math.max(1, row.retryAfter) };
  }
  return { ok: true };
}

/**
 * Counts one conversation opened with an API key ("o:" and its id) in the current minute against its tenant's
 * `rateOpenPerMin`: opening conversations is what resets the per-conversation budgets, so it has a limit of its own.
 */
export async function countConversationOpen(
  client: Db,
  agent: { apiKeyId: string; tenantId: string },
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const [row] = await client.$queryRaw<(RateCount & { limit: number })[]>`
    WITH counted AS (${countCall(Prisma.sql`ARRAY[${`o:${agent.apiKeyId}`}::text]`)})
    SELECT counted.*, t."rateOpenPerMin" AS "limit" FROM counted JOIN "Tenant" t ON t."id" = ${agent.tenantId}`;
  return row && row.count > row.limit ? { ok: false, retryAfterSeconds: Math.max(1, row.retryAfter) } : { ok: true };
}

/**
 * Drops the buckets of windows that have ended, which the next call would reset anyway, so the table holds
 * only the conversations and keys active this minute instead of every one ever used. A bucket moved into the
 * current window while this runs is re-checked by PostgreSQL and kept.
 */
export async function pruneRateBuckets(client: Db): Promise<number> {
  return client.$executeRaw`DELETE FROM "RateBucket" WHERE "windowStart" < date_trunc('minute', now())`;
}
