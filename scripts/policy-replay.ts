import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { replayRules } from "../lib/admin/rules/replay";
import { reportText } from "../lib/policy-rules/replay";

// `npm run policy:replay -- --tenant <id> --rules <file> [--days 7] [--json]`: a candidate rule set replayed over the
// tenant's recorded decisions of the last days, on the facts each was made on; nothing is published or changed.
const { values } = parseArgs({
  options: {
    tenant: { type: "string" },
    rules: { type: "string" },
    days: { type: "string", default: "7" },
    json: { type: "boolean", default: false },
  },
});
const days = Number(values.days);
if (!process.env.DATABASE_URL || !values.tenant || !values.rules || !Number.isInteger(days) || days < 1 || days > 90) {
  console.error(
    "usage: DATABASE_URL=… npm run policy:replay -- --tenant <tenant id> --rules <file> [--days 1..90] [--json]",
  );
  process.exit(1);
}
const replayed = await replayRules(values.tenant, readFileSync(values.rules, "utf8"), days);
if (!replayed.ok) {
  console.error(`the rule set is refused:\n${replayed.errors.map((error) => `  ${error}`).join("\n")}`);
  process.exit(2);
}
console.log(
  values.json
    ? JSON.stringify(replayed.report, null, 2)
    : reportText(replayed.report, `recorded in the last ${days} days`).join("\n"),
);
process.exit(0);
