import { formatMoney } from "../../money";
import type { RuleVerdict } from "../engine/evaluate";
import type { RuleFacts } from "../schema";
import { count } from "../../words";

/**
 * How many recorded decisions a replay reads: at first, and at most when asked to go further; and how many of a
 * tenant's replays may wait or run at once (`perTenant`), so that no tenant keeps the job runner from the others.
 */
export const REPLAY_LIMITS = { first: 10_000, max: 1_000_000, perTenant: 5 } as const;

/** How a call was, or would have been, decided: the numbers' consequence with a rule set's verdict on top. */
export type Decided = "allow" | "hold" | "deny" | "fail";

export function decidedBy(consequence: "auto" | "approval", verdict: RuleVerdict): Decided {
  switch (verdict.verdict) {
    case "deny":
      return "deny";
    case "failed":
      return "fail";
    case "hold":
      return "hold";
    case "allow":
      return consequence === "approval" ? "hold" : "allow";
  }
}

/** One recorded decision with the facts it was made on (a decision-log row's `detail.rules`). */
export interface RecordedDecision {
  callId: string;
  at: string;
  facts: RuleFacts;
  consequence: "auto" | "approval";
  live: RuleVerdict;
  shadow: RuleVerdict | null;
  shadowId: string | null;
}

export interface Difference {
  callId: string;
  at: string;
  tool: string;
  amountCents: number;
  currency: string;
  was: Decided;
  would: Decided;
  /** The rules that make the difference: the candidate's that hold or deny, else the live ones it no longer has. */
  rules: string[];
}

export interface RuleGroup {
  rule: string;
  calls: number;
  /** Money of the calls, by currency. */
  cents: Record<string, number>;
}

export interface DifferenceReport {
  decisions: number;
  /** Of the decisions, those recorded before the facts of issue 38: replayed with them read as `withMissingFacts`. */
  olderFacts?: number;
  /** Whether older decisions of the window remained beyond the most the replay read. */
  more?: boolean;
  differences: Difference[];
  byRule: RuleGroup[];
}

const ruleIds = (verdict: RuleVerdict) =>
  verdict.verdict === "hold" || verdict.verdict === "deny" ? verdict.rules.map((rule) => rule.id) : [];

/**
 * Every recorded call whose decision would change under `verdictOf` (a shadow set's recorded verdict, or a
 * candidate replayed on the recorded facts), grouped by rule with counts and money. The same verdicts give the same
 * report, so a replay over the calls a shadow set saw reports exactly what the shadow run did.
 */
export function differences(
  decisions: readonly RecordedDecision[],
  verdictOf: (decision: RecordedDecision) => RuleVerdict,
): DifferenceReport {
  const found: Difference[] = [];
  for (const decision of decisions) {
    const candidate = verdictOf(decision);
    const was = decidedBy(decision.consequence, decision.live);
    const would = decidedBy(decision.consequence, candidate);
    if (was === would) continue;
    const rules = ruleIds(candidate);
    found.push({
      callId: decision.callId,
      at: decision.at,
      tool: decision.facts.tool,
      amountCents: decision.facts.call.amount_cents,
      currency: decision.facts.order.currency,
      was,
      would,
      rules: rules.length > 0 ? rules : ruleIds(decision.live).map((id) => `${id} (dropped)`),
    });
  }
  const groups = new Map<string, RuleGroup>();
  for (const difference of found) {
    for (const rule of difference.rules.length > 0 ? difference.rules : ["(the numbers)"]) {
      const group = groups.get(rule) ?? { rule, calls: 0, cents: {} };
      group.calls += 1;
      group.cents[difference.currency] = (group.cents[difference.currency] ?? 0) + difference.amountCents;
      groups.set(rule, group);
    }
  }
  return {
    decisions: decisions.length,
    differences: found,
    byRule: [...groups.values()].sort((a, b) => b.calls - a.calls || a.rule.localeCompare(b.rule)),
  };
}

/** Two reports over consecutive pages of decisions as one: counts added, differences in order, groups merged. */
export function mergeReports(first: DifferenceReport, second: DifferenceReport): DifferenceReport {
  const groups = new Map<string, RuleGroup>(
    first.byRule.map((group) => [group.rule, { ...group, cents: { ...group.cents } }]),
  );
  for (const group of second.byRule) {
    const merged = groups.get(group.rule) ?? { rule: group.rule, calls: 0, cents: {} };
    merged.calls += group.calls;
    for (const [currency, cents] of Object.entries(group.cents))
      merged.cents[currency] = (merged.cents[currency] ?? 0) + cents;
    groups.set(group.rule, merged);
  }
  return {
    decisions: first.decisions + second.decisions,
    differences: [...first.differences, ...second.differences],
    byRule: [...groups.values()].sort((a, b) => b.calls - a.calls || a.rule.localeCompare(b.rule)),
  };
}

/** Money per currency in words: "80.00 USD + 12.00 EUR", or "no money". */
export const moneyOf = (cents: Record<string, number>) =>
  Object.entries(cents)
    .map(([currency, amount]) => formatMoney(amount, currency))
    .join(" + ") || "no money";

/**
 * The report's first line. `over` says which calls were compared, since a shadow report counts only the calls its
 * shadow set saw and a replay every call of the window: "2 calls of the 5 recorded in the last 7 days …".
 */
export const reportSummary = (report: DifferenceReport, over: string) =>
  `${count(report.differences.length, "call")} of the ${report.decisions} ${over} would be decided differently.`;

/** The report in lines of text, as `npm run policy:replay` prints it. */
export function reportText(report: DifferenceReport, over: string): string[] {
  return [
    reportSummary(report, over),
    ...(report.more
      ? [`  older decisions remain beyond the ${report.decisions} read: read further with a larger limit`]
      : []),
    ...report.byRule.map((group) => `  ${group.rule}: ${count(group.calls, "call")}, ${moneyOf(group.cents)}`),
    ...report.differences.map(
      (difference) =>
        `  ${difference.at} ${difference.callId} ${difference.tool} ${formatMoney(difference.amountCents, difference.currency)}: ${difference.was} -> ${difference.would} (${difference.rules.join(", ") || "the numbers"})`,
    ),
  ];
}
