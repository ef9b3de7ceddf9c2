import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { chainName, readKeptHeads, type Head } from "../lib/audit/heads";
import { verifyTenant } from "../lib/audit/seal";
import { findChains, SEALED_LOGS, type SealedLog } from "../lib/audit/sql";
import { db } from "../lib/db";

// `npm run audit:verify -- [--head FILE ...] [--allow-unkeyed] [tenant ...]`: checks every chain (the decision log
// and the audit log of each tenant, or of the tenants named) against the rows as they are now, with the seal keys
// from the environment, and against the last head kept in the head files (AUDIT_HEAD_FILE when none is given):
// names the first row altered, removed, reordered, added or backdated, a seal altered or made without the key, and
// a chain that no longer reaches its kept head. Exits 1 when any chain fails, 2 when it cannot check.

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { head: { type: "string", multiple: true }, "allow-unkeyed": { type: "boolean", default: false } },
});
if (!process.env.DATABASE_URL) {
  console.error("audit:verify needs DATABASE_URL");
  process.exit(2);
}
const headFiles = values.head ?? (process.env.AUDIT_HEAD_FILE ? [process.env.AUDIT_HEAD_FILE] : []);
const kept = new Map<string, Head>();
let failed = 0;
for (const file of headFiles) {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    console.error(`audit:verify cannot read the kept head file ${file}: ${(error as Error).message}`);
    process.exit(2);
  }
  const { heads, problems } = readKeptHeads(text);
  for (const problem of problems) {
    failed++;
    console.log(`${file}: FAILED: ${problem}`);
  }
  for (const [name, head] of heads) if (head.seq > (kept.get(name)?.seq ?? 0)) kept.set(name, head);
}
if (headFiles.length === 0)
  console.log("no kept head given (--head or AUDIT_HEAD_FILE): seals removed from the end cannot be noticed");

const named = new Set(positionals);
const chains = new Map<string, { log: SealedLog; tenantId: string }>();
for (const chain of [...(await findChains(db)), ...kept.values()])
  if (named.size === 0 || named.has(chain.tenantId))
    chains.set(chainName(chain.log, chain.tenantId), { log: chain.log, tenantId: chain.tenantId });
for (const tenantId of named) for (const log of SEALED_LOGS) chains.set(chainName(log, tenantId), { log, tenantId });

for (const [name, { log, tenantId }] of [...chains].sort(([a], [b]) => a.localeCompare(b))) {
  const result = await verifyTenant(tenantId, { log, kept: kept.get(name), allowUnkeyed: values["allow-unkeyed"] });
  const label = `${log} log ${tenantId}`;
  if (result.problem) {
    failed++;
    console.log(
      `${label}: FAILED at seal ${result.problem.seq}: ${result.problem.kind}${"rowId" in result.problem ? ` row ${result.problem.rowId}` : ""}: ${result.problem.message}`,
    );
  } else {
    console.log(
      `${label}: ok, ${result.seals} seals${result.unkeyedSeals ? ` (${result.unkeyedSeals} from before keys)` : ""}, ${result.rowsSealed} rows sealed, ${result.rowsNotYetSealed} not sealed yet, head ${result.head}${result.keptSeq === null ? ", no kept head" : `, reaches the kept head (seal ${result.keptSeq})`}`,
    );
  }
}
await db.$disconnect();
process.exit(failed ? 1 : 0);
