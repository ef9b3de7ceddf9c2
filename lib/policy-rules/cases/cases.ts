import { z } from "zod";
import { isPlainObject } from "../../canonical";
import { compileDraft, evaluateRules, type RuleVerdict } from "../engine/evaluate";
import { ARG_TYPES, ruleArgs, RuleFactsSchema, type RuleFacts } from "../schema";
import type { Rule } from "../validate";

// A rule set's own tests (issue 38): each case is a call's facts and the verdict the rules must give it. A case
// names only the facts it is about; every other fact reads as in `CASE_BASE`, an unremarkable refund. Cases test
// the rules alone: the numbers (limits, caps, ceilings) run in code before them and are not part of it.

const Expected = z.discriminatedUnion("verdict", [
  z.strictObject({ verdict: z.literal("allow") }),
  z.strictObject({
    verdict: z.literal("hold"),
    /** A hold reason the call must be held with; any when absent. */
    reason: z.string().min(1).max(200).optional(),
    rule: z.string().min(1).max(60).optional(),
  }),
  z.strictObject({
    verdict: z.literal("deny"),
    code: z.string().min(1).max(40),
    rule: z.string().min(1).max(60).optional(),
  }),
]);

export const RuleCaseSchema = z.strictObject({
  name: z.string().trim().min(1).max(120),
  facts: z.record(z.string(), z.unknown()).default({}),
  expect: Expected,
});
export type RuleCase = z.infer<typeof RuleCaseSchema>;

/**
 * The call a case changes: a refund of 10.00 (reason "damaged") by an agent of a year with no refund today and
 * nothing moved, for a customer of a year, not on fraud watch, not refunded this week, on a delivered order of 100.00
 * placed 10 days ago, the conversation's first write, on a Wednesday at noon in the tenant's zone.
 */
export const CASE_BASE: RuleFacts = {
  tool: "issue_refund",
  effect: "irreversible",
  agent: { id: "agent", refunds_today: 0, role: "AGENT", age_days: 365, exposure_cents: 0 },
  customer: { id: "customer", fraud_watch: false, age_days: 365, refunds_7d: 0, refunded_cents_7d: 0 },
  order: { id: "order", status: "delivered", currency: "USD", total_cents: 10_000, refunded_cents: 0, age_days: 10 },
  call: { amount_cents: 1000, conversation_writes: 0, conversation_spent_cents: 0, hour: 12, weekday: 3 },
  args: ruleArgs("issue_refund", { order_id: "order", amount_cents: 1000, currency: "USD", reason: "damaged" }),
};

export const MAX_CASES = 200;
export const RuleCasesSchema = z.array(RuleCaseSchema).max(MAX_CASES);

/** The cases of a JSON text (the editor's and `npm run policy:test`'s form), or what is wrong with it in words. */
export function parseCases(text: string): { ok: true; cases: RuleCase[] } | { ok: false; errors: string[] } {
  if (text.trim() === "") return { ok: true, cases: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, errors: [`the test cases are not JSON: ${(error as Error).message}`] };
  }
  const parsed = RuleCasesSchema.safeParse(json);
  if (parsed.success) return { ok: true, cases: parsed.data };
  return {
    ok: false,
    errors: parsed.error.issues.map((issue) => {
      const [index, ...path] = issue.path;
      const where = typeof index === "number" ? `case ${index + 1}` : "the test cases";
      return `${where}${path.length > 0 ? ` (${path.join(".")})` : ""}: ${issue.message}`;
    }),
  };
}

export interface CaseResult {
  name: string;
  passed: boolean;
  expected: string;
  got: string;
}

/** `patch` laid over `base`, object by object: a case names only the facts it changes. */
export function overlay(base: unknown, patch: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(patch)) return patch;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) merged[key] = key in base ? overlay(base[key], value) : value;
  return merged;
}

/**
 * The facts a case describes: `CASE_BASE` with the case's facts laid over it (a case naming another tool starts from
 * that tool's empty arguments), checked against the schema.
 */
export function caseFacts(ruleCase: RuleCase): { ok: true; facts: RuleFacts } | { ok: false; error: string } {
  const tool = ruleCase.facts.tool;
  const base =
    typeof tool === "string" && tool !== CASE_BASE.tool && tool in ARG_TYPES
      ? { ...CASE_BASE, args: ruleArgs(tool, {}) }
      : CASE_BASE;
  const parsed = RuleFactsSchema.safeParse(overlay(base, ruleCase.facts));
  if (parsed.success) return { ok: true, facts: parsed.data };
  const [issue] = parsed.error.issues;
  return { ok: false, error: `facts.${issue.path.join(".")}: ${issue.message}` };
}

/** A verdict in words: `hold by "rule-id" ("reason")`. */
export function verdictWords(verdict: RuleVerdict): string {
  switch (verdict.verdict) {
    case "allow":
      return "allow";
    case "failed":
      return `failed (${verdict.message})`;
    case "hold":
      return verdict.rules.map((rule) => `hold by "${rule.id}" ("${rule.reason}")`).join(", ");
    case "deny":
      return verdict.rules.map((rule) => `deny by "${rule.id}" (code ${rule.code})`).join(", ");
  }
}

function expectedWords(expected: RuleCase["expect"]): string {
  const by = "rule" in expected && expected.rule ? ` by "${expected.rule}"` : "";
  if (expected.verdict === "hold") return `hold${by}${expected.reason ? ` ("${expected.reason}")` : ""}`;
  if (expected.verdict === "deny") return `deny${by} (code ${expected.code})`;
  return "allow";
}

/** Whether a verdict is the one a case expects: the same verdict, and the reason, code and rule where it names them. */
export function meets(verdict: RuleVerdict, expected: RuleCase["expect"]): boolean {
  if (expected.verdict === "allow") return verdict.verdict === "allow";
  if (expected.verdict === "hold") {
    return (
      verdict.verdict === "hold" &&
      verdict.rules.some(
        (rule) =>
          (expected.reason === undefined || rule.reason === expected.reason) &&
          (expected.rule === undefined || rule.id === expected.rule),
      )
    );
  }
  return (
    verdict.verdict === "deny" &&
    verdict.rules.some(
      (rule) => rule.code === expected.code && (expected.rule === undefined || rule.id === expected.rule),
    )
  );
}

/**
 * Runs a validated rule set's cases. The set is pre-parsed into the engine's one slot for cases and evaluated with
 * no await in between, so running cases does not grow the engine's memory.
 */
export function runCases(rules: Rule[], cases: readonly RuleCase[]): CaseResult[] {
  if (cases.length === 0) return [];
  const ruleSet = compileDraft("cases", rules);
  return cases.map((ruleCase) => {
    const expected = expectedWords(ruleCase.expect);
    const facts = caseFacts(ruleCase);
    if (!facts.ok) return { name: ruleCase.name, passed: false, expected, got: `no verdict: ${facts.error}` };
    if (!ruleSet)
      return { name: ruleCase.name, passed: false, expected, got: "the rule engine could not load the set" };
    const verdict = evaluateRules(ruleSet, facts.facts);
    return { name: ruleCase.name, passed: meets(verdict, ruleCase.expect), expected, got: verdictWords(verdict) };
  });
}

/** The failing cases in words, one line each: `case "name": expected deny (code x), got allow`. */
export const failureLines = (results: readonly CaseResult[]) =>
  results
    .filter((result) => !result.passed)
    .map((result) => `case "${result.name}": expected ${result.expected}, got ${result.got}`);
