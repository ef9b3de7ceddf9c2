import type { Client, Db } from "./db";
import { Prisma } from "./generated/prisma/client";

// The statements of the shared plumbing at lib's root: live views, the outbox, rate buckets, metrics, readiness.

/** A row type's column names, listed once as the keys of `columns`: the compiler checks the list against the type. */
export const columnsOf = <T>(columns: Record<keyof T, true>) => Object.keys(columns) as (keyof T)[];

/** A statement's row split in two: the `columns` given, and the rest. */
export function splitRow<R extends object, K extends keyof R>(row: R, columns: readonly K[]): [Pick<R, K>, Omit<R, K>] {
  const rest: Partial<R> = { ...row };
  const picked: Partial<Pick<R, K>> = {};
  for (const column of columns) {
    picked[column] = row[column];
    delete rest[column];
  }
  return [picked as Pick<R, K>, rest as Omit<R, K>];
}

/** The channel a change of a watched conversation's calls is announced on, with the conversation's id. */
export const CALLS_CHANNEL = "toolgate_calls";

/**
 * The statement that counts one call in fixed one-minute windows per conversation ("c:" and its id) and per agent
 * ("a:" and its id, across its keys and connections), in PostgreSQL so that every app instance shares them, and
 * returns each bucket as it left it (key, count, and `retryAfter` seconds to the window's end). `keys` is a text[]
 * expression of the buckets; an empty or null array counts nothing. The buckets move in one statement, always in key
 * order ("a:" before "c:"), so concurrent callers cannot deadlock. Also run inside the agent API's key lookup (`authenticateForConversation`),
 * which saves a call its own round trip, and for the client metadata documents and key sets OAuth fetches ("m:"
 * and "k:" buckets).
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

/** Creates the live watch `id` of the conversation, or moves its expiry if it exists. */
export async function saveLiveWatch(
  db: Client,
  watch: { id: string; conversationId: string; expiresAt: Date },
): Promise<void> {
  const { id, conversationId, expiresAt } = watch;
  await db.liveWatch.upsert({
    where: { id },
    create: { id, conversationId, expiresAt },
    update: { expiresAt },
    select: { id: true },
  });
}

export async function deleteLiveWatch(db: Client, id: string): Promise<void> {
  await db.liveWatch.deleteMany({ where: { id } });
}

/** Deletes the live watches that expired before `now`; returns how many. */
export async function deleteExpiredLiveWatches(db: Client, now: Date): Promise<number> {
  return (await db.liveWatch.deleteMany({ where: { expiresAt: { lt: now } } })).count;
}

/** Inserts one pending outbox message per row, all of this owner. */
export async function insertOutboxMessages(
  db: Db,
  owner: { tenantId: string; orderId: string | null; toolCallId: string | null },
  rows: { id: string; kind: string; recipient: string; subject: string; body: string }[],
): Promise<void> {
  await db.$executeRaw(outboxInsert(owner, rows, Prisma.empty));
}

/** The statement that inserts `rows` into the outbox, each row once for every row of `from` (a FROM clause) if given. */
export function outboxInsert(
  owner: { tenantId: string; orderId: string | null; toolCallId: string | null },
  rows: { id: string; kind: string; recipient: string; subject: string; body: string }[],
  from: Prisma.Sql,
): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "OutboxMessage" ("id", "tenantId", "orderId", "toolCallId", "kind", "recipient", "subject", "body")
    SELECT message."id", ${owner.tenantId}, ${owner.orderId}::text, ${owner.toolCallId}::text, message."kind", message."recipient", message."subject", message."body"
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS message("id" text, "kind" text, "recipient" text, "subject" text, "body" text)${from}`;
}

/** The gauges that describe the shared database, the same on every instance. */
export interface DatabaseGauges {
  approvalsPending: number;
  approvalsOldestSeconds: number;
  outboxPending: number;
  outboxRetried: number;
  outboxDead: number;
  refundsUnknown: number;
  refundsUnknownOldestSeconds: number;
  reconcileProviderReachable: number;
}

const UNKNOWN_REFUND = ["unknown", "investigate"];

/**
 * The database gauges as they are now: pending approvals and the oldest one's age, the outbox's queue, retries
 * and dead messages, the refunds whose outcome is unknown and the oldest one's age, and whether the last
 * reconciliation reached the payment provider (1, also before any ran) or not (0).
 */
export async function readDatabaseGauges(db: Db): Promise<DatabaseGauges> {
  const [row] = await db.$queryRaw<DatabaseGauges[]>`
    SELECT a."approvalsPending", a."approvalsOldestSeconds", o."outboxPending", o."outboxRetried", o."outboxDead",
           r."refundsUnknown", r."refundsUnknownOldestSeconds", p."reconcileProviderReachable"
    FROM (SELECT count(*)::int AS "approvalsPending", COALESCE(EXTRACT(EPOCH FROM now() - min("createdAt")), 0)::float8 AS "approvalsOldestSeconds"
          FROM "ApprovalRequest" WHERE "status" = 'pending') a,
         (SELECT count(*) FILTER (WHERE "status" IN ('pending', 'sending'))::int AS "outboxPending",
                 count(*) FILTER (WHERE "status" IN ('pending', 'sending') AND "lastError" IS NOT NULL)::int AS "outboxRetried",
                 count(*) FILTER (WHERE "status" = 'dead')::int AS "outboxDead"
          FROM "OutboxMessage" WHERE "status" IN ('pending', 'sending', 'dead')) o,
         (SELECT count(*)::int AS "refundsUnknown", COALESCE(EXTRACT(EPOCH FROM now() - min("createdAt")), 0)::float8 AS "refundsUnknownOldestSeconds"
          FROM "Refund" WHERE "status" = ANY(${UNKNOWN_REFUND})) r,
         (SELECT COALESCE((SELECT CASE WHEN "ok" THEN 1 ELSE 0 END FROM "ReconcileStatus" WHERE "id" = 'provider'), 1)::int AS "reconcileProviderReachable") p`;
  return row;
}

/** The names of the migrations applied to the database (finished, not rolled back). */
export async function findAppliedMigrations(db: Db): Promise<string[]> {
  const rows = await db.$queryRaw<
    { name: string }[]
  >`SELECT "migration_name" AS name FROM "_prisma_migrations" WHERE "finished_at" IS NOT NULL AND "rolled_back_at" IS NULL`;
  return rows.map((row) => row.name);
}
