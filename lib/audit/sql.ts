import type { Db, Tx } from "../db";
import { Prisma } from "../generated/prisma/client";

// The audit module's statements: the decision log and the audit log of people's actions as their seals read them,
// the decision log as its exports read it, and the seals themselves.

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

/** An audit log row (a person's action) as it is sealed. */
export interface AuditRow {
  id: string;
  tenantId: string;
  actorId: string;
  action: string;
  detail: unknown;
  createdAt: Date;
  txid: string;
}

/** The two sealed logs: the decision log and the audit log of people's actions, each with its own chains. */
export type SealedLog = "decision" | "audit";
export const SEALED_LOGS: readonly SealedLog[] = ["decision", "audit"];
export type SealedRow = LogRow | AuditRow;

const TABLE: Record<SealedLog, Prisma.Sql> = {
  decision: Prisma.raw(`"DecisionLog"`),
  audit: Prisma.raw(`"AuditLog"`),
};
const ROW_COLUMNS: Record<SealedLog, Prisma.Sql> = {
  decision: LOG_ROW_COLUMNS,
  audit: Prisma.raw(
    `"id"::text AS "id", "tenantId", "actorId", "action", "detail", "createdAt", "txid"::text AS "txid"`,
  ),
};

/** What a seal covers and the seal before it: its hash is taken over exactly this. */
export interface SealLink {
  log: SealedLog;
  tenantId: string;
  seq: number;
  fromTxid: string;
  toTxid: string;
  rowIds: string[];
  rowHashes: string[];
  prevHash: string;
  /** The key whose HMAC the hash is; null for a seal made before seals were keyed (a plain SHA-256). */
  keyId: string | null;
  /** How many rows the chain holds through this seal; null before seals were keyed. */
  position: string | null;
  sealedAt: Date;
}

export interface StoredSeal extends SealLink {
  hash: string;
}

const SEAL_COLUMNS = Prisma.raw(
  `"log", "tenantId", "seq", "fromTxid"::text AS "fromTxid", "toTxid"::text AS "toTxid", "rowIds"::text[] AS "rowIds", "rowHashes", "prevHash",
  "keyId", "position"::text AS "position", "createdAt" AS "sealedAt", "hash"`,
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
 * Where the log's next seals start (the highest txid sealed so far, 0 before the first), the horizon: the oldest
 * transaction still running, below which every row has committed or rolled back, and the time of the seals.
 */
export async function findSealRange(tx: Tx, log: SealedLog): Promise<{ from: string; horizon: string; at: Date }> {
  const [range] = await tx.$queryRaw<{ from: string; horizon: string; at: Date }[]>`
    SELECT COALESCE(MAX("toTxid"), 0)::text AS "from", pg_snapshot_xmin(pg_current_snapshot())::text AS "horizon", now() AS "at"
    FROM "DecisionSeal" WHERE "log" = ${log}`;
  return range;
}

/** The txid of the row `offset` rows into [from, horizon) in txid order, or null when there are fewer rows. */
export async function findTxidAtOffset(
  db: Db,
  log: SealedLog,
  range: { from: string; horizon: string },
  offset: number,
): Promise<string | null> {
  // The text is named apart from the column: ORDER BY "txid" would otherwise sort the text, and "10000" < "9999".
  const [row] = await db.$queryRaw<{ cut: string }[]>`
    SELECT "txid"::text AS "cut" FROM ${TABLE[log]} WHERE "txid" >= ${range.from}::bigint AND "txid" < ${range.horizon}::bigint
    ORDER BY "txid" OFFSET ${offset}::int LIMIT 1`;
  return row?.cut ?? null;
}

/** Every tenant's rows with a txid in [from, to), by tenant and then id. */
export function findLogRowsInRange(tx: Tx, log: SealedLog, from: string, to: string): Promise<SealedRow[]> {
  return tx.$queryRaw<SealedRow[]>`
    SELECT ${ROW_COLUMNS[log]} FROM ${TABLE[log]} WHERE "txid" >= ${from}::bigint AND "txid" < ${to}::bigint ORDER BY "tenantId", "id"`;
}

/** One tenant's rows with a txid in [from, to), by id. */
export function findTenantLogRowsInRange(
  db: Db,
  log: SealedLog,
  tenantId: string,
  from: string,
  to: string,
): Promise<SealedRow[]> {
  return db.$queryRaw<SealedRow[]>`
    SELECT ${ROW_COLUMNS[log]} FROM ${TABLE[log]}
    WHERE "tenantId" = ${tenantId} AND "txid" >= ${from}::bigint AND "txid" < ${to}::bigint ORDER BY "id"`;
}

/** How many of the tenant's rows have a txid of `from` or above. */
export async function countTenantLogRowsFrom(db: Db, log: SealedLog, tenantId: string, from: string): Promise<number> {
  const [pending] = await db.$queryRaw<{ count: number }[]>`
    SELECT count(*)::int AS "count" FROM ${TABLE[log]} WHERE "tenantId" = ${tenantId} AND "txid" >= ${from}::bigint`;
  return pending.count;
}

/** The tenant's first row (by id) under a txid no transaction has had yet: only a hand-made insert gives one. */
export async function findTenantRowPastTxids(db: Db, log: SealedLog, tenantId: string): Promise<string | null> {
  const [row] = await db.$queryRaw<{ id: string }[]>`
    SELECT "id"::text AS "id" FROM ${TABLE[log]}
    WHERE "tenantId" = ${tenantId} AND "txid" >= pg_snapshot_xmax(pg_current_snapshot())::text::bigint
    ORDER BY "id" LIMIT 1`;
  return row?.id ?? null;
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

/** The tenant's latest seal of the log, or null before the first. */
export async function findLastSeal(tx: Tx, log: SealedLog, tenantId: string): Promise<StoredSeal | null> {
  const [previous] = await tx.$queryRaw<StoredSeal[]>`
    SELECT ${SEAL_COLUMNS} FROM "DecisionSeal" WHERE "log" = ${log} AND "tenantId" = ${tenantId} ORDER BY "seq" DESC LIMIT 1`;
  return previous ?? null;
}

/** The tenant's seals of the log in chain order. */
export function findSeals(db: Db, log: SealedLog, tenantId: string): Promise<StoredSeal[]> {
  return db.$queryRaw<StoredSeal[]>`
    SELECT ${SEAL_COLUMNS} FROM "DecisionSeal" WHERE "log" = ${log} AND "tenantId" = ${tenantId} ORDER BY "seq"`;
}

/** Every chain that has a seal: the log and the tenant. */
export function findChains(db: Db): Promise<{ log: SealedLog; tenantId: string }[]> {
  return db.$queryRaw<{ log: SealedLog; tenantId: string }[]>`
    SELECT DISTINCT "log", "tenantId" FROM "DecisionSeal" ORDER BY "log", "tenantId"`;
}

export async function insertSeal(tx: Tx, seal: StoredSeal): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO "DecisionSeal" ("log", "tenantId", "seq", "fromTxid", "toTxid", "rowIds", "rowHashes", "prevHash", "keyId", "position", "createdAt", "hash")
    VALUES (${seal.log}, ${seal.tenantId}, ${seal.seq}::int, ${seal.fromTxid}::bigint, ${seal.toTxid}::bigint, ${seal.rowIds}::bigint[],
            ${seal.rowHashes}::text[], ${seal.prevHash}, ${seal.keyId}, ${seal.position}::bigint, ${seal.sealedAt}::timestamptz, ${seal.hash})`;
}

export async function appendAuditLog(
  db: Db,
  entry: { tenantId: string; actorId: string; action: string; detail: unknown },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "AuditLog" ("tenantId", "actorId", "action", "detail")
    VALUES (${entry.tenantId}, ${entry.actorId}, ${entry.action}, ${JSON.stringify(entry.detail)}::jsonb)`;
}
