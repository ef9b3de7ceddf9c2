import { canonicalJson, sha256Hex } from "../canonical";
import { db, transaction, type Db } from "../db";
import {
  countTenantLogRowsFrom,
  findLastSeal,
  findLogRowsInRange,
  findSealRange,
  findSeals,
  findTenantLogRowsInRange,
  findTxidAtOffset,
  insertSeal,
  tryLockSealer,
  type LogRow,
  type SealLink,
  type StoredSeal,
} from "./sql";

// The decision log's hash chain, one per tenant, built off the hot path: appends stay a plain INSERT that never
// waits for another, and a job seals what was appended since. A seal covers every row of one tenant whose
// appending transaction id (`txid`) lies in [fromTxid, toTxid). `toTxid` is the oldest transaction still running
// when the seal was made, so every row below it had committed or rolled back: a row that commits late is sealed
// later, never skipped. Rows are hashed one by one in id order; the seal hashes that list with the previous
// seal's hash.

export const GENESIS = "0".repeat(64);
const MAX_ROWS_PER_RUN = 5000;

/**
 * A row's own hash: everything it says except its id, so a row moved to another id is recognized where it went.
 * A row without a decision's detail hashes as rows did before the column existed.
 */
export function rowHash(row: LogRow): string {
  const { id: _id, detail, ...content } = row;
  return sha256Hex(
    canonicalJson({ ...content, ...(detail === null ? {} : { detail }), createdAt: row.createdAt.toISOString() }),
  );
}

export function sealHash(link: SealLink): string {
  return sha256Hex(canonicalJson(link));
}

/**
 * One run of the sealing job: a seal for every tenant with rows appended since the last run. Returns how many
 * seals it wrote; 0 when another instance is sealing right now.
 */
export async function sealDecisionLog(): Promise<number> {
  return transaction(async (tx) => {
    if (!(await tryLockSealer(tx))) return 0;
    const range = await findSealRange(tx);
    const to = await batchEnd(tx, range.from, range.horizon);
    if (BigInt(to) <= BigInt(range.from)) return 0;
    const rows = await findLogRowsInRange(tx, range.from, to);
    const byTenant = new Map<string, LogRow[]>();
    for (const row of rows) {
      const list = byTenant.get(row.tenantId);
      if (list) list.push(row);
      else byTenant.set(row.tenantId, [row]);
    }
    for (const [tenantId, tenantRows] of byTenant) {
      const previous = await findLastSeal(tx, tenantId);
      const link: SealLink = {
        tenantId,
        seq: (previous?.seq ?? 0) + 1,
        fromTxid: previous?.toTxid ?? "0",
        toTxid: to,
        rowIds: tenantRows.map((row) => row.id),
        rowHashes: tenantRows.map(rowHash),
        prevHash: previous?.hash ?? GENESIS,
      };
      await insertSeal(tx, link, sealHash(link));
    }
    return byTenant.size;
  });
}

/** The end of this run's range: the horizon, or earlier so that one run seals at most about MAX_ROWS_PER_RUN rows. */
async function batchEnd(client: Db, from: string, horizon: string): Promise<string> {
  const cut = await findTxidAtOffset(client, from, horizon, MAX_ROWS_PER_RUN);
  if (!cut) return horizon;
  // A single transaction with more rows than a batch is sealed whole.
  return cut === from ? (BigInt(from) + 1n).toString() : cut;
}

export type VerifyProblem =
  | { kind: "seal-altered" | "seal-missing" | "chain-broken"; seq: number; message: string }
  | { kind: "altered" | "removed" | "reordered" | "inserted"; seq: number; rowId: string; message: string };

export interface VerifyResult {
  tenantId: string;
  seals: number;
  rowsSealed: number;
  rowsNotYetSealed: number;
  head: string;
  problem: VerifyProblem | null;
}

/** Checks a tenant's chain link by link against the rows as they are now; stops at the first problem. */
export async function verifyTenant(tenantId: string, client: Db = db): Promise<VerifyResult> {
  const seals = await findSeals(client, tenantId);
  const result: VerifyResult = {
    tenantId,
    seals: seals.length,
    rowsSealed: 0,
    rowsNotYetSealed: 0,
    head: GENESIS,
    problem: null,
  };
  let previous: StoredSeal | null = null;
  for (const seal of seals) {
    const expected = {
      seq: (previous?.seq ?? 0) + 1,
      prevHash: previous?.hash ?? GENESIS,
      fromTxid: previous?.toTxid ?? "0",
    };
    if (seal.seq !== expected.seq)
      return fail(result, { kind: "seal-missing", seq: expected.seq, message: `seal ${expected.seq} is missing` });
    if (seal.prevHash !== expected.prevHash || seal.fromTxid !== expected.fromTxid) {
      return fail(result, {
        kind: "chain-broken",
        seq: seal.seq,
        message: `seal ${seal.seq} does not follow seal ${seal.seq - 1}`,
      });
    }
    const { hash, ...link } = seal;
    if (sealHash(link) !== hash)
      return fail(result, { kind: "seal-altered", seq: seal.seq, message: `seal ${seal.seq} was altered` });
    const rows = await findTenantLogRowsInRange(client, tenantId, seal.fromTxid, seal.toTxid);
    const problem = compareRows(seal, rows);
    if (problem) return fail(result, problem);
    result.rowsSealed += seal.rowIds.length;
    result.head = seal.hash;
    previous = seal;
  }
  result.rowsNotYetSealed = await countTenantLogRowsFrom(client, tenantId, previous?.toTxid ?? "0");
  return result;
}

function fail(result: VerifyResult, problem: VerifyProblem): VerifyResult {
  return { ...result, problem };
}

/** The first row, in id order, where the rows now differ from what the seal recorded. */
function compareRows(seal: StoredSeal, rows: LogRow[]): VerifyProblem | null {
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
    if (hash === seal.rowHashes[index]) continue;
    if (sealedHashes.has(hash))
      return {
        kind: "reordered",
        ...where,
        message: `row ${id} holds what seal ${seal.seq} recorded for another row: rows were reordered`,
      };
    return { kind: "altered", ...where, message: `row ${id} was altered after seal ${seal.seq}` };
  }
  return null;
}
