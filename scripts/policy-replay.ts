import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { replayRules } from "../lib/admin/rules/replay";
import { REPLAY_LIMITS, reportText } from "../lib/policy-rules/replay/replay";

// `npm run policy:replay -- --tenant <id> --rules <file> [--days 7] [--limit 10000] [--json]`: a candidate rule set replayed over the
// tenant's recorded decisions of the last days, on the facts each was made on; nothing is published or changed.
const { values } = parseArgs({
  options: {
    tenant: { type: "string" },
    rules: { type: "string" },
    days: { type: "string", default: "7" },
    limit: { type: "string", default: String(REPLAY_LIMITS.first) },
    json: { type: "boolean", default: false },
  },
});
const days = Number(values.days);
const limit = Number(values.limit);
const limitOk = Number.isInteger(limit) && limit >= 1 && limit <= REPLAY_LIMITS.max;
if (
  !process.env.DATABASE_URL ||
  !values.tenant ||
  !values.rules ||
  !Number.isInteger(days) ||
  days < 1 ||
  days > 90 ||
  !limitOk
) {
  console.error(
    `usage: DATABASE_URL=… npm run policy:replay -- --tenant <tenant id> --rules <file> [--days 1..90] [--limit 1..${REPLAY_LIMITS.max}] [--json]`,
  );
  process.exit(1);
}
const replayed = await replayRules(values.tenant, readFileSync(values.rules, "utf8"), days, limit);
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
