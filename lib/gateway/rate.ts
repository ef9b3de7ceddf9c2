import type { Sql } from "../db";
import { outcome, type Outcome } from "./outcome";
import type { ConversationFacts, TenantPolicy } from "./types";

export type RateResult = { ok: true } | { ok: false; outcome: Outcome; retryAfterSeconds: number };

interface BucketRow {
  key: string;
  count: number;
  retryAfter: number;
}

/**
 * Stage 1: fixed one-minute windows per conversation and per API key, counted in PostgreSQL so that every
 * app instance shares them. Runs before the body is parsed. Both buckets move in one statement, always in
 * the same key order ("c:" before "k:"), so concurrent callers cannot deadlock.
 */
export async function checkRate(
  client: Sql,
  conversation: ConversationFacts,
  apiKeyId: string | null,
  policy: TenantPolicy,
): Promise<RateResult> {
  const conversationKey = `c:${conversation.id}`;
  const apiKey = apiKeyId ? `k:${apiKeyId}` : conversationKey;
  const rows = await client.$queryRaw<BucketRow[]>`
    INSERT INTO "RateBucket" ("key", "windowStart", "count")
    SELECT DISTINCT bucket, date_trunc('minute', now()), 1 FROM unnest(ARRAY[${conversationKey}::text, ${apiKey}::text]) AS bucket
    ORDER BY bucket
    ON CONFLICT ("key") DO UPDATE SET
      "count" = CASE WHEN "RateBucket"."windowStart" = EXCLUDED."windowStart" THEN "RateBucket"."count" + 1 ELSE 1 END,
      "windowStart" = EXCLUDED."windowStart"
    RETURNING "key", "count", CEIL(EXTRACT(EPOCH FROM ("windowStart" + interval '1 minute' - now())))::int AS "retryAfter"`;
  for (const row of rows) {
    const limit = row.key === conversationKey ? policy.rateConversationPerMin : policy.rateKeyPerMin;
    if (row.count > limit) return { ok: false, outcome: outcome("rate.limited"), retryAfterSeconds: Math.max(1, row.retryAfter) };
  }
  return { ok: true };
}

/**
 * Drops the buckets of windows that have ended, which the next call would reset anyway, so the table holds
 * only the conversations and keys active this minute instead of every one ever used. A bucket moved into the
 * current window while this runs is re-checked by PostgreSQL and kept.
 */
export async function pruneRateBuckets(client: Sql): Promise<number> {
  return client.$executeRaw`DELETE FROM "RateBucket" WHERE "windowStart" < date_trunc('minute', now())`;
}
