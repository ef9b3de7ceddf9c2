import type { Db, Tx } from "../db";
import { Prisma } from "../generated/prisma/client";

// The audit module's statements: the decision log as its seals and exports read it, the seals themselves, and the
// audit log of people's actions.

/** A decision log row as it is sealed and exported. */
export interface LogRow {
  id: string;
  tenantId: string;
  conversationId: string | null;
  toolCallId: string | null;
  toolName: string;
  orderId: string | null;
  kind: string;
  stage: string;
  code: string;
  actorId: string | null;
  replayed: boolean;
  latencyMs: number;
  /** A supervisor's decision: proposed, approved and executed arguments and the approvers' proofs. */
  detail: unknown;
  createdAt: Date;
  txid: string;
}

// Ids and txids come back as text so that 64-bit values never pass through a JavaScript number.
const LOG_ROW_COLUMNS =
  Prisma.raw(`"id"::text AS "id", "tenantId", "conversationId", "toolCallId", "toolName", "orderId", "kind", "stage", "code", "actorId",
  "replayed", "latencyMs", "detail", "createdAt", "txid"::text AS "txid"`);

/** What a seal covers and the seal before it: its hash is taken over exactly this. */
export interface SealLink {
  tenantId: string;
  seq: number;
  fromTxid: string;
  toTxid: string;
  rowIds: string[];
  rowHashes: string[];
  prevHash: string;
}

export interface StoredSeal extends SealLink {
  hash: string;
}

const SEAL_COLUMNS = Prisma.raw(
  `"tenantId", "seq", "fromTxid"::text AS "fromTxid", "toTxid"::text AS "toTxid", "rowIds"::text[] AS "rowIds", "rowHashes", "prevHash", "hash"`,
);

// Any constant that no other advisory lock in the project uses: one sealer at a time, on any instance.
const SEALER_LOCK = 7_100_115;

/** Takes the sealer's lock until the transaction ends; false when another transaction holds it. */
export async function tryLockSealer(tx: Tx): Promise<boolean> {
  const [{ locked }] = await tx.$queryRaw<
    { locked: boolean }[]
  >`SELECT pg_try_advisory_xact_lock(${SEALER_LOCK}::bigint) AS "locked"`;
  return locked;
}

/**
 * Where the next seals start (the highest txid sealed so far, 0 before the first) and the horizon: the oldest
 * transaction still running, below which every row has committed or rolled back.
 */
export async function findSealRange(tx: Tx): Promise<{ from: string; horizon: string }> {
  const [range] = await tx.$queryRaw<{ from: string; horizon: string }[]>`
    SELECT COALESCE(MAX("toTxid"), 0)::text AS "from", pg_snapshot_xmin(pg_current_snapshot())::text AS "horizon" FROM "DecisionSeal"`;
  return range;
}

/** The txid of the row `offset` rows into [from, horizon) in txid order, or undefined when there are fewer rows. */
export async function findTxidAtOffset(
  db: Db,
  from: string,
  horizon: string,
  offset: number,
): Promise<string | undefined> {
  const [cut] = await db.$queryRaw<{ txid: string }[]>`
    SELECT "txid"::text AS "txid" FROM "DecisionLog" WHERE "txid" >= ${from}::bigint AND "txid" < ${horizon}::bigint
    ORDER BY "txid" OFFSET ${offset}::int LIMIT 1`;
  return cut?.txid;
}

/** Every tenant's rows with a txid in [from, to), by tenant and then id. */
export function findLogRowsInRange(tx: Tx, from: string, to: string): Promise<LogRow[]> {
  return tx.$queryRaw<LogRow[]>`
    SELECT ${LOG_ROW_COLUMNS} FROM "DecisionLog" WHERE "txid" >= ${from}::bigint AND "txid" < ${to}::bigint ORDER BY "tenantId", "id"`;
}

/** One tenant's rows with a txid in [from, to), by id. */
export function findTenantLogRowsInRange(db: Db, tenantId: string, from: string, to: string): Promise<LogRow[]> {
  return db.$queryRaw<LogRow[]>`
    SELECT ${LOG_ROW_COLUMNS} FROM "DecisionLog"
    WHERE "tenantId" = ${tenantId} AND "txid" >= ${from}::bigint AND "txid" < ${to}::bigint ORDER BY "id"`;
}

/** How many of the tenant's rows have a txid of `from` or above. */
export async function countTenantLogRowsFrom(db: Db, tenantId: string, from: string): Promise<number> {
  const [pending] = await db.$queryRaw<{ count: number }[]>`
    SELECT count(*)::int AS "count" FROM "DecisionLog" WHERE "tenantId" = ${tenantId} AND "txid" >= ${from}::bigint`;
  return pending.count;
}

/** One page of the tenant's rows created in [from, to) after `after`, in (createdAt, id) order. */
export function findLogPage(
  db: Db,
  query: { tenantId: string; from: Date; to: Date; after: { createdAt: Date; id: string }; limit: number },
): Promise<LogRow[]> {
  return db.$queryRaw<LogRow[]>`
    SELECT ${LOG_ROW_COLUMNS} FROM "DecisionLog"
    WHERE "tenantId" = ${query.tenantId} AND "createdAt" >= ${query.from.toISOString()}::timestamptz AND "createdAt" < ${query.to.toISOString()}::timestamptz
      AND ("createdAt", "id") > (${query.after.createdAt.toISOString()}::timestamptz, ${query.after.id}::bigint)
    ORDER BY "createdAt", "id" LIMIT ${query.limit}::int`;
}

/** The tenant's latest seal, or undefined before the first. */
export async function findLastSeal(tx: Tx, tenantId: string): Promise<StoredSeal | undefined> {
  const [previous] = await tx.$queryRaw<StoredSeal[]>`
    SELECT ${SEAL_COLUMNS} FROM "DecisionSeal" WHERE "tenantId" = ${tenantId} ORDER BY "seq" DESC LIMIT 1`;
  return previous;
}

/** The tenant's seals in chain order. */
export function findSeals(db: Db, tenantId: string): Promise<StoredSeal[]> {
  return db.$queryRaw<
    StoredSeal[]
  >`SELECT ${SEAL_COLUMNS} FROM "DecisionSeal" WHERE "tenantId" = ${tenantId} ORDER BY "seq"`;
}

/** Appends a seal to its tenant's chain. */
export async function insertSeal(tx: Tx, link: SealLink, hash: string): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO "DecisionSeal" ("tenantId", "seq", "fromTxid", "toTxid", "rowIds", "rowHashes", "prevHash", "hash")
    VALUES (${link.tenantId}, ${link.seq}::int, ${link.fromTxid}::bigint, ${link.toTxid}::bigint, ${link.rowIds}::bigint[], ${link.rowHashes}::text[],
            ${link.prevHash}, ${hash})`;
}

/** Appends a person's action to the tenant's audit log. */
export async function appendAuditLog(
  db: Db,
  entry: { tenantId: string; actorId: string; action: string; detail: unknown },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "AuditLog" ("tenantId", "actorId", "action", "detail")
    VALUES (${entry.tenantId}, ${entry.actorId}, ${entry.action}, ${JSON.stringify(entry.detail)}::jsonb)`;
}
