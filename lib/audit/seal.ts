import { canonicalJson, sha256Hex } from "../canonical";
import { db, transaction, type Db, type Tx } from "../db";
import { headOf, publishHeads, type Head } from "./heads/heads";
import { hmacHex, keyById, sealingKey, type SealKey } from "./heads/keys";
import {
  countTenantLogRowsFrom,
  findLastSeal,
  findLogRowsInRange,
  findSealRange,
  findSeals,
  findTenantLogRowsInRange,
  findTenantRowPastTxids,
  findTxidAtOffset,
  insertSeal,
  SEALED_LOGS,
  tryLockSealer,
  type SealedLog,
  type SealedRow,
  type SealLink,
  type StoredSeal,
} from "./sql";

// The decision log's and the audit log's chains, one per log and tenant, built off the hot path: appends stay a
// plain INSERT that never waits for another, and a job seals what was appended since. A seal covers every row of
// one tenant whose appending transaction id (`txid`, set by the database, never by the inserter) lies in
// [fromTxid, toTxid). `toTxid` is the oldest transaction still running when the seal was made, so every row below
// it had committed or rolled back: a row that commits late is sealed later, never skipped. Rows are hashed one by
// one in id order; the seal is an HMAC, under a key the database never holds, of that list, the previous seal's
// hash, the chain's row count and the time. Each pass publishes the new heads outside the database (heads.ts).

export const GENESIS = "0".repeat(64);
const MAX_ROWS_PER_RUN = 5000;
// A sealed row claiming to be older than this before the previous seal was made was inserted with a time it did
// not happen at (the database sets it; only someone who turned the triggers off can choose it). Transactions that
// append rows run for seconds, so a legitimate late commit stays far inside it.
const BACKDATE_SLACK_MS = 15 * 60_000;

/**
 * A row's own hash: everything it says except its id, so a row moved to another id is recognized where it went.
 * A row without a decision's detail hashes as rows did before the column existed.
 */
export function rowHash(row: SealedRow): string {
  const { id: _id, detail, ...content } = row;
  return sha256Hex(
    canonicalJson({ ...content, ...(detail === null ? {} : { detail }), createdAt: row.createdAt.toISOString() }),
  );
}

/** A seal's hash: an HMAC under its key, or for a seal made before keys, the plain SHA-256 it was made with. */
export function sealHash(link: SealLink, key: SealKey | null): string {
  if (!key) {
    const { tenantId, seq, fromTxid, toTxid, rowIds, rowHashes, prevHash } = link;
    return sha256Hex(canonicalJson({ tenantId, seq, fromTxid, toTxid, rowIds, rowHashes, prevHash }));
  }
  return hmacHex(key, canonicalJson({ ...link, sealedAt: link.sealedAt.toISOString() }));
}

/**
 * One run of the sealing job: a seal for every tenant with rows appended to either log since the last run, then
 * their heads published. Returns how many seals it wrote; 0 when another instance is sealing right now.
 */
export async function sealLogs(): Promise<number> {
  const key = sealingKey();
  const seals = await transaction(async (tx) => {
    if (!(await tryLockSealer(tx))) return [];
    const made: StoredSeal[] = [];
    for (const log of SEALED_LOGS) made.push(...(await sealLog(tx, log, key)));
    return made;
  });
  await publishHeads(seals.map((seal) => headOf(seal, key)));
  return seals.length;
}

async function sealLog(tx: Tx, log: SealedLog, key: SealKey): Promise<StoredSeal[]> {
  const range = await findSealRange(tx, log);
  const to = await batchEnd(tx, log, range);
  if (BigInt(to) <= BigInt(range.from)) return [];
  const rows = await findLogRowsInRange(tx, log, range.from, to);
  const byTenant = new Map<string, SealedRow[]>();
  for (const row of rows) {
    const list = byTenant.get(row.tenantId);
    if (list) list.push(row);
    else byTenant.set(row.tenantId, [row]);
  }
  const made: StoredSeal[] = [];
  for (const [tenantId, tenantRows] of byTenant) {
    const previous = await findLastSeal(tx, log, tenantId);
    const before = previous?.position ?? (previous ? await sealedRowCount(tx, log, tenantId) : 0);
    const link: SealLink = {
      log,
      tenantId,
      seq: (previous?.seq ?? 0) + 1,
      fromTxid: previous?.toTxid ?? "0",
      toTxid: to,
      rowIds: tenantRows.map((row) => row.id),
      rowHashes: tenantRows.map(rowHash),
      prevHash: previous?.hash ?? GENESIS,
      keyId: key.id,
      position: String(Number(before) + tenantRows.length),
      sealedAt: range.at,
    };
    const seal = { ...link, hash: sealHash(link, key) };
    await insertSeal(tx, seal);
    made.push(seal);
  }
  return made;
}

/** The rows a chain of seals made before keys holds (they record no position). */
async function sealedRowCount(client: Db, log: SealedLog, tenantId: string): Promise<number> {
  return (await findSeals(client, log, tenantId)).reduce((sum, seal) => sum + seal.rowIds.length, 0);
}

/** The end of this run's range: the horizon, or earlier so that one run seals at most about MAX_ROWS_PER_RUN rows. */
async function batchEnd(client: Db, log: SealedLog, range: { from: string; horizon: string }): Promise<string> {
  const cut = await findTxidAtOffset(client, log, range, MAX_ROWS_PER_RUN);
  if (!cut) return range.horizon;
  // A single transaction with more rows than a batch is sealed whole.
  return cut === range.from ? (BigInt(range.from) + 1n).toString() : cut;
}

export type VerifyProblem =
  | {
      kind:
        "seal-altered" | "seal-missing" | "chain-broken" | "unkeyed" | "key-unknown" | "head-missing" | "head-differs";
      seq: number;
      message: string;
    }
  | {
      kind: "altered" | "removed" | "reordered" | "inserted" | "backdated";
      seq: number;
      rowId: string;
      message: string;
    };

export interface VerifyResult {
  log: SealedLog;
  tenantId: string;
  seals: number;
  /** Seals made before seals were keyed, accepted at the start of the chain only when asked to. */
  unkeyedSeals: number;
  rowsSealed: number;
  rowsNotYetSealed: number;
  head: string;
  /** The kept head the chain was checked against, when one was given. */
  keptSeq: number | null;
  problem: VerifyProblem | null;
}

export interface VerifyOptions {
  log?: SealedLog;
  /** The last head published for this chain, kept outside the database: the chain must reach it exactly. */
  kept?: Head;
  /** Accepts seals made before keys at the start of the chain (a database sealed by an older version). */
  allowUnkeyed?: boolean;
  client?: Db;
}

/** Checks a chain link by link against the rows as they are now, then against the kept head; stops at the first problem. */
export async function verifyTenant(tenantId: string, options: VerifyOptions = {}): Promise<VerifyResult> {
  const { log = "decision", kept, allowUnkeyed = false, client = db } = options;
  const seals = await findSeals(client, log, tenantId);
  const result: VerifyResult = {
    log,
    tenantId,
    seals: seals.length,
    unkeyedSeals: 0,
    rowsSealed: 0,
    rowsNotYetSealed: 0,
    head: GENESIS,
    keptSeq: kept?.seq ?? null,
    problem: null,
  };
  let previous: StoredSeal | null = null;
  for (const seal of seals) {
    const problem =
      linkProblem(seal, previous, result.rowsSealed, allowUnkeyed) ??
      compareRows(seal, await findTenantLogRowsInRange(client, log, tenantId, seal.fromTxid, seal.toTxid), previous);
    if (problem) return fail(result, problem);
    if (!seal.keyId) result.unkeyedSeals++;
    result.rowsSealed += seal.rowIds.length;
    result.head = seal.hash;
    previous = seal;
  }
  if (kept) {
    const problem = headProblem(seals, kept);
    if (problem) return fail(result, problem);
  }
  // A row no seal can ever take (its txid is past every transaction's): appended by hand, with the triggers off.
  const forged = await findTenantRowPastTxids(client, log, tenantId);
  if (forged)
    return fail(result, {
      kind: "inserted",
      seq: (previous?.seq ?? 0) + 1,
      rowId: forged,
      message: `row ${forged} claims a transaction id no transaction has had yet: it was inserted by hand, where no seal would ever cover it`,
    });
  result.rowsNotYetSealed = await countTenantLogRowsFrom(client, log, tenantId, previous?.toTxid ?? "0");
  return result;
}

function fail(result: VerifyResult, problem: VerifyProblem): VerifyResult {
  return { ...result, problem };
}

/** Whether the seal follows the one before it and is what its key made. */
function linkProblem(
  seal: StoredSeal,
  previous: StoredSeal | null,
  rowsBefore: number,
  allowUnkeyed: boolean,
): VerifyProblem | null {
  const expected = {
    seq: (previous?.seq ?? 0) + 1,
    prevHash: previous?.hash ?? GENESIS,
    fromTxid: previous?.toTxid ?? "0",
  };
  if (seal.seq !== expected.seq)
    return { kind: "seal-missing", seq: expected.seq, message: `seal ${expected.seq} is missing` };
  const broken: VerifyProblem = {
    kind: "chain-broken",
    seq: seal.seq,
    message: `seal ${seal.seq} does not follow seal ${seal.seq - 1}`,
  };
  if (seal.prevHash !== expected.prevHash || seal.fromTxid !== expected.fromTxid) return broken;
  const { hash, ...link } = seal;
  if (!seal.keyId) {
    if (previous?.keyId || !allowUnkeyed)
      return {
        kind: "unkeyed",
        seq: seal.seq,
        message: `seal ${seal.seq} has no key: it was rebuilt without AUDIT_SEAL_KEY${previous?.keyId ? "" : " (or made before seals were keyed: pass --allow-unkeyed)"}`,
      };
    return sealHash(link, null) === hash
      ? null
      : { kind: "seal-altered", seq: seal.seq, message: `seal ${seal.seq} was altered` };
  }
  const key = keyById(seal.keyId);
  if (!key)
    return {
      kind: "key-unknown",
      seq: seal.seq,
      message: `seal ${seal.seq} was made with key ${seal.keyId}, which is not configured (AUDIT_SEAL_KEY_ID, AUDIT_SEAL_RETIRED_KEYS)`,
    };
  if (seal.position !== String(rowsBefore + seal.rowIds.length)) return broken;
  if (sealHash(link, key) !== hash)
    return {
      kind: "seal-altered",
      seq: seal.seq,
      message: `seal ${seal.seq} was altered, or made without the seal key`,
    };
  return null;
}

/** The first row, in id order, where the rows now differ from what the seal recorded. */
function compareRows(seal: StoredSeal, rows: SealedRow[], previous: StoredSeal | null): VerifyProblem | null {
  const sealedAt = new Map(seal.rowIds.map((id, index) => [id, index]));
  const sealedHashes = new Set(seal.rowHashes);
  const current = new Map(rows.map((row) => [row.id, row]));
  const ids = [...new Set([...seal.rowIds, ...current.keys()])].sort((a, b) =>
    BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0,
  );
  for (const id of ids) {
    const index = sealedAt.get(id);
    const row = current.get(id);
    const where = { seq: seal.seq, rowId: id };
    if (index === undefined)
      return {
        kind: "inserted",
        ...where,
        message: `row ${id} was added to seal ${seal.seq}'s range after it was sealed`,
      };
    if (!row) return { kind: "removed", ...where, message: `row ${id} was removed (sealed in seal ${seal.seq})` };
    const hash = rowHash(row);
    if (hash !== seal.rowHashes[index]) {
      if (sealedHashes.has(hash))
        return {
          kind: "reordered",
          ...where,
          message: `row ${id} holds what seal ${seal.seq} recorded for another row: rows were reordered`,
        };
      return { kind: "altered", ...where, message: `row ${id} was altered after seal ${seal.seq}` };
    }
    if (previous && row.createdAt.getTime() < previous.sealedAt.getTime() - BACKDATE_SLACK_MS)
      return {
        kind: "backdated",
        ...where,
        message: `row ${id} says it was created at ${row.createdAt.toISOString()}, but it was appended after seal ${previous.seq} (${previous.sealedAt.toISOString()}): it was inserted with an earlier time`,
      };
  }
  return null;
}

/** Whether the chain reaches the kept head exactly: the same seal at the same place, with the same rows. */
function headProblem(seals: StoredSeal[], kept: Head): VerifyProblem | null {
  const seal = seals.find((candidate) => candidate.seq === kept.seq);
  if (!seal)
    return {
      kind: "head-missing",
      seq: kept.seq,
      message: `the chain ends at seal ${seals.at(-1)?.seq ?? 0}, but seal ${kept.seq} (${kept.position} rows, up to row ${kept.rowId}) was published at ${kept.at}: seals and rows were removed`,
    };
  if (seal.hash !== kept.hash || seal.position !== kept.position || seal.rowIds.at(-1) !== kept.rowId)
    return {
      kind: "head-differs",
      seq: kept.seq,
      message: `seal ${kept.seq} is not the one published at ${kept.at}: the chain was rebuilt from there or earlier`,
    };
  return null;
}
