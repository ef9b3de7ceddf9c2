import { db, type Db } from "../../db";
import { outcome, type Outcome } from "../../outcome";
import { countCallIn, countOpenIn, deleteEndedRateBuckets } from "./sql";
import type { ConversationFacts, RateCount, TenantPolicy } from "../types";

export type RateResult = { ok: true } | { ok: false; outcome: Outcome; retryAfterSeconds: number };

/** The rate bucket of an agent's calls through any of its keys and connections. */
export const agentBucket = (agentId: string) => `a:${agentId}`;

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
  // One budget per agent across all its keys and connections, so another key or consent does not add one.
  const agentKey = apiKeyId ? agentBucket(conversation.agentId) : conversationKey;
  const rows = counted ?? (await countCallIn(client, conversationKey, agentKey));
  for (const row of rows) {
    const limit = row.key === conversationKey ? policy.rateConversationPerMin : policy.rateKeyPerMin;
    if (row.count > limit)
      return { ok: false, outcome: outcome("rate.limited"), retryAfterSeconds: Math.max(1, row.retryAfter) };
  }
  return { ok: true };
}

/**
 * Counts one conversation opened by a person ("o:u:" and their id), in the browser or with any of their keys and
 * connections, in the current minute against the tenant's `rateOpenPerMin`: opening conversations is what resets
 * the per-conversation budgets, so it has a limit of its own, one per person.
 */
export async function countConversationOpen(
  opener: { tenantId: string; userId: string },
  client: Db = db,
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const bucket = `o:u:${opener.userId}`;
  const row = await countOpenIn(client, { bucket, tenantId: opener.tenantId });
  return row && row.count > row.limit ? { ok: false, retryAfterSeconds: Math.max(1, row.retryAfter) } : { ok: true };
}

/**
 * Drops the buckets of windows that have ended, which the next call would reset anyway, so the table holds
 * only the conversations and keys active this minute instead of every one ever used. A bucket moved into the
 * current window while this runs is re-checked by PostgreSQL and kept.
 */
export async function pruneRateBuckets(client: Db): Promise<number> {
  return deleteEndedRateBuckets(client);
}
