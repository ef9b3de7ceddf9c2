import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { db } from "../lib/db";
import { findRuleSetVersion, findTenantRuleSets } from "../lib/admin/rules/sql";
import { parseCases, runCases } from "../lib/policy-rules/cases/cases";
import { validateRules } from "../lib/policy-rules/validate";

// `npm run policy:test -- --rules <file> [--cases <file>]` or `npm run policy:test -- --tenant <id> [--shadow]`:
// runs a rule set's own test cases (lib/policy-rules/cases/cases.ts), from files or as the tenant's live (or shadow)
// version stores them. Exit code 0 when every case passes, 1 when one fails, 2 when the input is refused.
const { values } = parseArgs({
  options: {
    rules: { type: "string" },
    cases: { type: "string" },
    tenant: { type: "string" },
    shadow: { type: "boolean", default: false },
  },
});
const usage =
  "usage: npm run policy:test -- --rules <file.cedar> [--cases <file.json>]\n" +
  "   or: DATABASE_URL=… npm run policy:test -- --tenant <tenant id> [--shadow]";

function refuse(lines: string[]): never {
  console.error(lines.join("\n"));
  process.exit(2);
}

async function fromTenant(tenantId: string): Promise<{ name: string; text: string; cases: string }> {
  if (!process.env.DATABASE_URL) refuse(["DATABASE_URL is not set", usage]);
  const sets = await findTenantRuleSets(db, tenantId);
  if (!sets) refuse([`there is no tenant "${tenantId}"`]);
  const id = values.shadow ? sets.shadowRuleSetId : sets.liveRuleSetId;
  if (!id) refuse([`the tenant "${tenantId}" has no ${values.shadow ? "shadow" : "live"} rules`]);
  const version = await findRuleSetVersion(db, tenantId, { id });
  if (!version) refuse([`the rule set ${id} is missing`]);
  return { name: `${tenantId} version ${version.version}`, text: version.text, cases: JSON.stringify(version.cases) };
}

function fromFiles(rules: string): { name: string; text: string; cases: string } {
  const casesFile = values.cases ?? rules.replace(/\.cedar$/, "") + ".cases.json";
  const read = (file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch (error) {
      return refuse([`cannot read ${file}: ${(error as Error).message}`]);
    }
  };
  return { name: rules, text: read(rules), cases: read(casesFile) };
}

if (Boolean(values.rules) === Boolean(values.tenant)) refuse([usage]);
const set = values.tenant ? await fromTenant(values.tenant) : fromFiles(values.rules!);
const validated = validateRules(set.text);
if (!validated.ok) refuse([`${set.name}: the rule set is refused:`, ...validated.errors.map((error) => `  ${error}`)]);
const cases = parseCases(set.cases);
if (!cases.ok) refuse([`${set.name}: the test cases are refused:`, ...cases.errors.map((error) => `  ${error}`)]);
const results = runCases(validated.rules, cases.cases);
for (const result of results) {
  console.log(
    result.passed ? `  pass  ${result.name}` : `  FAIL  ${result.name}: expected ${result.expected}, got ${result.got}`,
  );
}
const failed = results.filter((result) => !result.passed).length;
console.log(`${set.name}: ${results.length - failed} of ${results.length} cases pass`);
process.exit(failed > 0 ? 1 : 0);
