import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { chainName, readKeptHeads } from "../lib/audit/heads/heads";
import { verifyTenant } from "../lib/audit/seal";
import { findChains, SEALED_LOGS, type SealedLog } from "../lib/audit/sql";
import { db } from "../lib/db";
import { env } from "../lib/env";

// `npm run audit:verify -- [--head FILE|FOLDER ...] [--allow-unkeyed] [tenant ...]`: checks every chain (the decision
// log and the audit log of each tenant, or of the tenants named) against the rows as they are now, with the seal keys
// from the environment, and against the last head kept in the head files (every `.jsonl` file of a folder;
// AUDIT_HEAD_FILE when none is given): names the first row altered, removed, reordered, added or backdated, a seal
// altered or made without the key, and a chain that no longer reaches its kept head. It says plainly which chains
// had no kept head: rows deleted from their end, with their seals, leave a chain that checks. Exits 1 when any
// chain fails, 2 when it cannot check.

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { head: { type: "string", multiple: true }, "allow-unkeyed": { type: "boolean", default: false } },
});
if (!process.env.DATABASE_URL) {
  console.error("audit:verify needs DATABASE_URL");
  process.exit(2);
}
const configured = env().AUDIT_HEAD_FILE;
const headPaths = values.head ?? (configured ? [configured] : []);
const headFiles: { file: string; text: string }[] = [];
for (const headPath of headPaths) {
  try {
    const files = statSync(headPath).isDirectory()
      ? readdirSync(headPath)
          .filter((name) => name.endsWith(".jsonl"))
          .sort()
          .map((name) => path.join(headPath, name))
      : [headPath];
    if (files.length === 0) console.log(`${headPath}: the folder holds no head files (.jsonl)`);
    for (const file of files) headFiles.push({ file, text: readFileSync(file, "utf8") });
  } catch (error) {
    console.error(`audit:verify cannot read the kept heads at ${headPath}: ${(error as Error).message}`);
    process.exit(2);
  }
}
const { heads: kept, problems } = readKeptHeads(headFiles);
let failed = 0;
for (const problem of problems) {
  failed++;
  console.log(`FAILED: ${problem}`);
}
const WITHOUT_HEADS =
  "rows deleted from the end of a chain, with their seals, leave a shorter chain that still checks ok; only a head kept outside the database shows them. Give the heads kept away from the database and the seal key: --head FILE or FOLDER, or AUDIT_HEAD_FILE";
if (headFiles.length === 0)
  console.log(`WARNING: no kept heads given, so this check cannot see deleted rows: ${WITHOUT_HEADS}`);

const named = new Set(positionals);
const chains = new Map<string, { log: SealedLog; tenantId: string }>();
for (const chain of [...(await findChains(db)), ...kept.values()])
  if (named.size === 0 || named.has(chain.tenantId))
    chains.set(chainName(chain.log, chain.tenantId), { log: chain.log, tenantId: chain.tenantId });
for (const tenantId of named) for (const log of SEALED_LOGS) chains.set(chainName(log, tenantId), { log, tenantId });

let unkept = 0;
for (const [name, { log, tenantId }] of [...chains].sort(([a], [b]) => a.localeCompare(b))) {
  const result = await verifyTenant(tenantId, { log, kept: kept.get(name), allowUnkeyed: values["allow-unkeyed"] });
  const label = `${log} log ${tenantId}`;
  if (result.problem) {
    failed++;
    console.log(
      `${label}: FAILED at seal ${result.problem.seq}: ${result.problem.kind}${"rowId" in result.problem ? ` row ${result.problem.rowId}` : ""}: ${result.problem.message}`,
    );
  } else {
    if (result.keptSeq === null) unkept++;
    console.log(
      `${label}: ok, ${result.seals} seals${result.unkeyedSeals ? ` (${result.unkeyedSeals} from before keys)` : ""}, ${result.rowsSealed} rows sealed, ${result.rowsNotYetSealed} not sealed yet, head ${result.head}${result.keptSeq === null ? ", NO KEPT HEAD: rows deleted from its end would not show" : `, reaches the kept head (seal ${result.keptSeq})`}`,
    );
  }
}
if (unkept > 0)
  console.log(
    `WARNING: ${unkept} of ${chains.size} chains checked ok without a kept head, which proves nothing about their end: ${WITHOUT_HEADS}`,
  );
await db.$disconnect();
process.exit(failed ? 1 : 0);
