import type { Db } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import { countCall } from "../../db/sql";
import type { RateCount } from "../types";

/** Counts one call in the conversation's bucket and the agent's (`countCall`); returns both as it left them. */
export async function countCallIn(db: Db, conversationKey: string, agentKey: string): Promise<RateCount[]> {
  return db.$queryRaw<RateCount[]>(countCall(Prisma.sql`ARRAY[${conversationKey}::text, ${agentKey}::text]`));
}

/** Counts one conversation opened in the person's "o:u:" bucket; returns it with its tenant's `rateOpenPerMin`. */
export async function countOpenIn(
  db: Db,
  opener: { bucket: string; tenantId: string },
): Promise<(RateCount & { limit: number }) | undefined> {
  const [row] = await db.$queryRaw<(RateCount & { limit: number })[]>`
    WITH counted AS (${countCall(Prisma.sql`ARRAY[${opener.bucket}::text]`)})
    SELECT counted.*, t."rateOpenPerMin" AS "limit" FROM counted JOIN "Tenant" t ON t."id" = ${opener.tenantId}`;
  return row;
}

/** Deletes the rate buckets of windows that have ended; returns how many. */
export async function deleteEndedRateBuckets(db: Db): Promise<number> {
  return db.$executeRaw`DELETE FROM "RateBucket" WHERE "windowStart" < date_trunc('minute', now())`;
}
