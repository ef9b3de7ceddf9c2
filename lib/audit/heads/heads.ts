import { randomBytes } from "node:crypto";
import { appendFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { canonicalJson } from "../../canonical";
import { env } from "../../env";
import { logError, logInfo } from "../../observe/log";
import { hmacHex, keyById, type SealKey } from "./keys";
import type { SealedLog, StoredSeal } from "../sql";

// The head of each chain, published outside the database after every sealing pass: lines at AUDIT_HEAD_FILE
// (JSON Lines) and the same lines in the log. Whoever keeps a copy can later prove that the database still reaches
// that head exactly; removing the last seals, or rebuilding a chain, cannot. Each line is signed with the seal key,
// so an edited head file does not pass either. AUDIT_HEAD_FILE names a file, appended to, or a folder (ending in
// `/`) where each pass writes a new file and changes none: object stores mounted as files often cannot append, and
// storage that refuses overwrites and deletes keeps the heads even from someone holding this host and its key.

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

/**
 * Publishes the heads a sealing pass made; a head file that cannot be written is logged, the seals stand. Under
 * `next dev` with a head file (as `npm run dev` sets one) the lines go to the file only, not to a developer's console
 * every pass.
 */
export async function publishHeads(heads: Head[]): Promise<void> {
  if (heads.length === 0) return;
  const target = env().AUDIT_HEAD_FILE;
  if (!(target && process.env.NODE_ENV === "development")) for (const head of heads) logInfo("audit.head", { ...head });
  if (!target) return;
  const lines = heads.map((head) => `${JSON.stringify(head)}\n`).join("");
  const file = target.endsWith("/") ? path.join(target, headFileName(new Date())) : target;
  const written =
    file === target ? appendFile(file, lines, { mode: 0o600 }) : writeFile(file, lines, { flag: "wx", mode: 0o600 });
  await written.catch((error: unknown) => logError("audit.head-file", error, { file }));
}

/** A new file's name in a head folder: sorts by time, and two instances sealing at once never pick the same. */
const headFileName = (at: Date) =>
  `heads-${at.toISOString().replace(/[:.]/g, "-")}-${randomBytes(4).toString("hex")}.jsonl`;

export const chainName = (log: SealedLog, tenantId: string) => `${log}:${tenantId}`;

/**
 * The latest kept head of every chain in the head files' texts (by `chainName`), and the lines that are not a head
 * signed by a configured key or that publish a seal already published with another hash, in any of the files.
 */
export function readKeptHeads(files: { file: string; text: string }[]): {
  heads: Map<string, Head>;
  problems: string[];
} {
  const heads = new Map<string, Head>();
  const problems: string[] = [];
  const published = new Map<string, { hash: string; at: string }>();
  for (const { file, text } of files) {
    text.split("\n").forEach((line, index) => {
      if (!line.trim()) return;
      const at = `${file} line ${index + 1}`;
      let head: Head;
      try {
        head = JSON.parse(line) as Head;
      } catch {
        problems.push(`${at} is not a head`);
        return;
      }
      const { sig, ...unsigned } = head;
      const key = typeof head.keyId === "string" ? keyById(head.keyId) : null;
      if (!key) {
        problems.push(`${at} names key ${JSON.stringify(head.keyId)}, which is not configured`);
        return;
      }
      if (sign(unsigned, key) !== sig) {
        problems.push(`${at} is not signed by key ${head.keyId}: the head file was edited`);
        return;
      }
      const name = chainName(head.log, head.tenantId);
      const first = published.get(`${name}#${head.seq}`);
      if (first && first.hash !== head.hash)
        problems.push(
          `${at} publishes seal ${head.seq} of the ${head.log} log of ${head.tenantId} again with another hash (first at ${first.at}): the chain was rebuilt`,
        );
      else if (!first) published.set(`${name}#${head.seq}`, { hash: head.hash, at });
      const kept = heads.get(name);
      if (!kept || head.seq > kept.seq) heads.set(name, head);
    });
  }
  return { heads, problems };
}
