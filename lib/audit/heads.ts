import { appendFile } from "node:fs/promises";
import { canonicalJson } from "../canonical";
import { env } from "../env";
import { logError, logInfo } from "../log";
import { hmacHex, keyById, type SealKey } from "./keys";
import type { SealedLog, StoredSeal } from "./sql";

// The head of each chain, published outside the database after every sealing pass: a line in AUDIT_HEAD_FILE
// (JSON Lines, append-only) and the same line in the log. Whoever keeps a copy can later prove that the database
// still reaches that head exactly; removing the last seals, or rebuilding a chain, cannot. Each line is signed
// with the seal key, so an edited head file does not pass either.

export interface Head {
  log: SealedLog;
  tenantId: string;
  seq: number;
  /** The last row the head's seal covers. */
  rowId: string;
  /** How many rows the chain holds through the head. */
  position: string;
  hash: string;
  keyId: string;
  at: string;
  sig: string;
}

type Unsigned = Omit<Head, "sig">;

const sign = (head: Unsigned, key: SealKey) => hmacHex(key, canonicalJson(head));

/** A keyed seal's head line, signed. */
export function headOf(seal: StoredSeal, key: SealKey): Head {
  const head: Unsigned = {
    log: seal.log,
    tenantId: seal.tenantId,
    seq: seal.seq,
    rowId: seal.rowIds.at(-1) ?? "",
    position: seal.position ?? "0",
    hash: seal.hash,
    keyId: key.id,
    at: seal.sealedAt.toISOString(),
  };
  return { ...head, sig: sign(head, key) };
}

/** Publishes the heads a sealing pass made; a head file that cannot be written is logged, the seals stand. */
export async function publishHeads(heads: Head[]): Promise<void> {
  if (heads.length === 0) return;
  for (const head of heads) logInfo("audit.head", { ...head });
  const file = env().AUDIT_HEAD_FILE;
  if (!file) return;
  await appendFile(file, heads.map((head) => `${JSON.stringify(head)}\n`).join(""), { mode: 0o600 }).catch(
    (error: unknown) => logError("audit.head-file", error, { file }),
  );
}

export const chainName = (log: SealedLog, tenantId: string) => `${log}:${tenantId}`;

/**
 * The latest kept head of every chain in a head file's text (by `chainName`), and the lines that are not a head
 * signed by a configured key or that publish a seal already published with another hash.
 */
export function readKeptHeads(text: string): { heads: Map<string, Head>; problems: string[] } {
  const heads = new Map<string, Head>();
  const problems: string[] = [];
  const published = new Map<string, { hash: string; line: number }>();
  text.split("\n").forEach((line, index) => {
    if (!line.trim()) return;
    let head: Head;
    try {
      head = JSON.parse(line) as Head;
    } catch {
      problems.push(`line ${index + 1} is not a head`);
      return;
    }
    const { sig, ...unsigned } = head;
    const key = typeof head.keyId === "string" ? keyById(head.keyId) : null;
    if (!key) {
      problems.push(`line ${index + 1} names key ${JSON.stringify(head.keyId)}, which is not configured`);
      return;
    }
    if (sign(unsigned, key) !== sig) {
      problems.push(`line ${index + 1} is not signed by key ${head.keyId}: the head file was edited`);
      return;
    }
    const name = chainName(head.log, head.tenantId);
    const first = published.get(`${name}#${head.seq}`);
    if (first && first.hash !== head.hash)
      problems.push(
        `line ${index + 1} publishes seal ${head.seq} of the ${head.log} log of ${head.tenantId} again with another hash (first at line ${first.line}): the chain was rebuilt`,
      );
    else if (!first) published.set(`${name}#${head.seq}`, { hash: head.hash, line: index + 1 });
    const kept = heads.get(name);
    if (!kept || head.seq > kept.seq) heads.set(name, head);
  });
  return { heads, problems };
}
