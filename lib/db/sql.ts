import type { Db } from "./index";
import { Prisma } from "../generated/prisma/client";

// The statements of the shared plumbing: the outbox and rate buckets, and helpers for every module's statements.

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

/**
 * The statement that counts one call in fixed one-minute windows per conversation ("c:" and its id) and per agent
 * ("a:" and its id, across its keys and connections), in PostgreSQL so that every app instance shares them, and
 * returns each bucket as it left it (key, count, and `retryAfter` seconds to the window's end). `keys` is a text[]
 * expression of the buckets; an empty or null array counts nothing. The buckets move in one statement, always in key
 * order ("a:" before "c:"), so concurrent callers cannot deadlock. Also run inside the agent API's key lookups
 * (`authenticateForConversation`, and `authenticateCountedApiKey` in the agent's bucket alone for a read of a call),
 * which saves each its own round trip, and for the client metadata documents and key sets OAuth fetches ("m:" and
 * "k:" buckets).
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

/** `text` for a LIKE pattern, its wildcards and the escape character taken literally (LIKE's default escape `\\`). */
export const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (char) => `\\${char}`);
