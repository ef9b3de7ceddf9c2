import { cpus, loadavg } from "node:os";
import { isAuthorized } from "@cedar-policy/cedar-wasm/nodejs";
import { requestFor, SAMPLE_FACTS } from "../lib/policy-rules/engine/entities";
import { compileRules, evaluateRules, unscreened, type RuleSet } from "../lib/policy-rules/engine/evaluate";
import type { RuleFacts } from "../lib/policy-rules/schema";
import { policiesOf } from "../lib/policy-rules/validate";
import { fail, rounds, summarize, writeSection } from "./common";

// `npm run bench:rules`: the cost of evaluating a tenant's rule set for one call, in one process, no database.
// Goal (issue 26): p99 under 0.2 ms per call for a 50-rule set.

const ROUNDS = rounds(20_000, 200);
const WARM_UP = rounds(2_000, 20);
const TOOLS = ["issue_refund", "update_shipping_address", "send_status_email", "get_order"];

function ruleText(index: number, tool: string): string {
  const kind = index % 5;
  const condition = [
    `resource.age_days > ${90 + index} && context.amount_cents > ${index * 100}`,
    `principal.refunds_today == ${index} && resource.customer.age_days < ${30 + index}`,
    `resource.customer.fraud_watch && resource.total_cents > ${index * 1000}`,
    // The facts of issue 38: the customer's week, the agent's exposure and age, the tenant's time of day.
    `resource.customer.refunds_7d >= ${2 + index} && principal.exposure_cents > ${index * 1000}`,
    `principal.age_days < ${index % 7} && (context.hour < 9 || context.weekday >= 6)`,
  ][kind];
  const says = kind === 2 ? `@deny("code-${index}")` : `@hold("reason ${index}")`;
  return `@id("rule-${index}") ${says}\nforbid (principal, action == Action::"${tool}", resource)\nwhen { ${condition} };`;
}

const set = (name: string, count: number, toolOf: (index: number) => string): RuleSet => {
  const text = Array.from({ length: count }, (_, index) => ruleText(index, toolOf(index))).join("\n");
  return compileRules(`bench:${name}`, text) ?? fail(`the ${name} rule set does not validate`);
};

const facts: RuleFacts = {
  ...SAMPLE_FACTS,
  agent: { id: "agt_bench", refunds_today: 1, role: "AGENT", age_days: 200, exposure_cents: 12_000 },
  customer: { id: "cus_bench", fraud_watch: false, age_days: 400, refunds_7d: 1, refunded_cents_7d: 2500 },
  order: { ...SAMPLE_FACTS.order, id: "ord_bench", total_cents: 15000, age_days: 30 },
  call: { amount_cents: 8000, conversation_writes: 1, conversation_spent_cents: 2000, hour: 14, weekday: 3 },
  args: { order_id: "ord_bench", amount_cents: 8000, currency: "USD", reason: "damaged" },
};

function measure(work: () => unknown, calls = ROUNDS) {
  for (let i = 0; i < WARM_UP; i++) work();
  const samples: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    work();
    samples.push(performance.now() - started);
  }
  return summarize(samples);
}

const fifty = set("fifty-one-tool", 50, () => "issue_refund");
const fiftyUnscreened = unscreened(fifty);
const spread = set("fifty-four-tools", 50, (index) => TOOLS[index % TOOLS.length]);
const three = set("three", 3, () => "issue_refund");
const rows: [string, ReturnType<typeof measure>][] = [
  ["3 rules on issue_refund, pre-parsed", measure(() => evaluateRules(three, facts))],
  [
    "50 rules, all on issue_refund, none tripped (the common call: the screen alone)",
    measure(() => evaluateRules(fifty, facts)),
  ],
  [
    "50 rules on issue_refund, one of which holds the call (the screen, then the rules that name it)",
    measure(() => evaluateRules(fifty, { ...facts, order: { ...facts.order, age_days: 200 } })),
  ],
  [
    "50 rules on issue_refund, the screen taken away (every rule visited, as before the screen)",
    measure(() => evaluateRules(fiftyUnscreened, facts)),
  ],
  ["50 rules over 4 tools, pre-parsed (13 apply to the call)", measure(() => evaluateRules(spread, facts))],
  [
    "50 rules, none for the call's tool (get_order)",
    measure(() => evaluateRules(fifty, { ...facts, tool: "get_order" })),
  ],
  [
    "50 rules on issue_refund, re-parsed on every call (the engine's stateless isAuthorized)",
    measure(
      () => isAuthorized({ ...requestFor(facts), policies: { staticPolicies: policiesOf(fifty.rules) } }),
      ROUNDS / 20,
    ),
  ],
];
if (evaluateRules(fifty, { ...facts, order: { ...facts.order, age_days: 200 } }).verdict !== "hold") {
  fail("the 50-rule set did not hold an order of 200 days");
}
const us = (value: number) => `${(value * 1000).toFixed(0)} µs`;
const table = [
  "| rule set | median | p99 | calls |",
  "|---|---|---|---|",
  ...rows.map(([name, { median, p99, n }]) => `| ${name} | ${us(median)} | ${us(p99)} | ${n} |`),
].join("\n");
console.log(table);
await writeSection(
  "rules",
  `### Rule evaluation (\`npm run bench:rules\`)

date ${new Date().toISOString()}; ${cpus().length} cores (${cpus()[0]?.model ?? "unknown CPU"}); Node ${process.version}; @cedar-policy/cedar-wasm 4.13.0; load average ${loadavg()[0].toFixed(1)} at the end.
One call's evaluation as stage 5 runs it (facts to Cedar entities, the engine's answer, the verdict), after ${WARM_UP}
warm-up calls, in one process. Goal: p99 under 0.2 ms for a 50-rule set. Each tool's rules are also folded into one
screening policy (lib/policy-rules/engine/screen.ts): a call that trips no rule costs one policy, not fifty; a call that
trips one pays for the screen and then the rules.

${table}`,
);
