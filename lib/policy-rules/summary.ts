import type { Rule } from "./validate";

/** What one rule does, in a sentence an admin reads: the effect, the tools, the condition as written. */
export function ruleSummary(rule: Rule): string {
  const tools = rule.actions.length === 0 ? "every call" : rule.actions.map((name) => `${name} calls`).join(" and ");
  const clause = /\b(when|unless)\s*\{([\s\S]*)\}\s*;?\s*$/.exec(rule.text);
  const condition = clause ? `${clause[1]} ${withMoney(clause[2].replace(/\s+/g, " ").trim())}` : "always";
  return rule.effect === "hold"
    ? `Holds ${tools} for a supervisor ${condition}, saying "${rule.says}".`
    : `Refuses ${tools} ${condition}, whoever approves (code ${rule.says}).`;
}

/** Each amount in cents a condition compares with, also as money: "amount_cents > 3000" reads "> 3000 (30.00)". */
function withMoney(condition: string): string {
  return condition.replace(
    /(_cents\s*(?:[<>]=?|==|!=)\s*)(\d+)\b/g,
    (_, comparison: string, cents: string) => `${comparison}${cents} (${(Number(cents) / 100).toFixed(2)})`,
  );
}
