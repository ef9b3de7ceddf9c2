import { preparsePolicySet, statefulIsAuthorized } from "@cedar-policy/cedar-wasm/nodejs";
import { factsRead, requestFor } from "./entities";
import { RULE_ACTIONS, type RuleFacts } from "../schema";
import { screeningPolicy } from "./screen";
import {
  BASE_POLICY,
  BASE_POLICY_ID,
  isUpstreamRule,
  policiesOf,
  SCREEN_POLICY_ID,
  validateRules,
  type Rule,
} from "../validate";

/** A rule set ready to evaluate: parsed once into the engine, one policy set per tool that any rule names. */
export interface RuleSet {
  key: string;
  rules: Rule[];
  /**
   * The engine's pre-parsed sets for each tool that has rules (a tool without them has nothing to evaluate): its
   * rules folded into one screening policy (lib/policy-rules/engine/screen.ts) where they fold exactly, and the rules.
   */
  sets: Map<string, ToolSet>;
}

/** One tool's pre-parsed sets and the facts its rules can read (the only ones handed to the engine). */
interface ToolSet {
  screen: string | null;
  rules: string;
  reads: ReadonlySet<string>;
}

export type RuleVerdict =
  | { verdict: "allow" }
  | { verdict: "hold"; rules: { id: string; reason: string }[] }
  | { verdict: "deny"; rules: { id: string; code: string }[] }
  | { verdict: "failed"; message: string };

const compiled = new Map<string, RuleSet>();

/** The rule set stored under `key` if this process has compiled it: a call then reads no rule text. */
export const knownRules = (key: string): RuleSet | undefined => compiled.get(key);

/**
 * The rule set stored under `key` (a published version: its text never changes), validated and pre-parsed once per
 * process so no call re-parses it. Null when the text does not validate (any longer).
 */
export function compileRules(key: string, text: string): RuleSet | null {
  const known = compiled.get(key);
  if (known) return known;
  const validated = validateRules(text);
  const ruleSet = validated.ok ? preparse(key, validated.rules) : null;
  if (ruleSet) compiled.set(key, ruleSet);
  return ruleSet;
}

/**
 * A draft (a candidate replayed, never published) pre-parsed into the engine under `slot`, replacing the slot's
 * previous draft, so trying many drafts does not grow the engine's memory. Evaluate it before the next await: a
 * later draft in the same slot replaces it.
 */
export function compileDraft(slot: string, rules: Rule[]): RuleSet | null {
  return preparse(`draft:${slot}`, rules);
}

function preparse(key: string, rules: Rule[]): RuleSet | null {
  const everyTool = rules.some((rule) => rule.actions.length === 0);
  // A rule for upstream tools is evaluated by ./upstream.ts, against the schema of the tenant's reviewed tools.
  const builtIn = rules.filter((rule) => !isUpstreamRule(rule)).flatMap((rule) => rule.actions);
  const tools = everyTool ? RULE_ACTIONS : [...new Set(builtIn)];
  const sets = new Map<string, ToolSet>();
  for (const tool of tools) {
    const own = rules.filter((rule) => rule.actions.length === 0 || rule.actions.includes(tool));
    const id = `${key}:${tool}`;
    if (preparsePolicySet(id, { staticPolicies: policiesOf(own) }).type !== "success") return null;
    const screenId = `${id}:screen`;
    const reads = factsRead(own.map((rule) => rule.text));
    sets.set(tool, { screen: preparseScreen(screenId, own) ? screenId : null, rules: id, reads });
  }
  return { key, rules, sets };
}

/** The same rule set judged by its rules alone, every screen taken away: what the screen must always agree with. */
export const unscreened = (ruleSet: RuleSet): RuleSet => ({
  ...ruleSet,
  sets: new Map([...ruleSet.sets].map(([tool, set]) => [tool, { ...set, screen: null }])),
});

/**
 * Pre-parses the screening policy of `rules` under `id`; false when they do not fold, or when the engine refuses the
 * folded form (its JSON reader stops at 128 levels of nesting, which a rule of a hundred chained `+` passes).
 */
function preparseScreen(id: string, rules: Rule[]): boolean {
  const screen = screeningPolicy(rules);
  if (screen === null) return false;
  const staticPolicies = { [BASE_POLICY_ID]: BASE_POLICY, [SCREEN_POLICY_ID]: screen };
  try {
    return preparsePolicySet(id, { staticPolicies }).type === "success";
  } catch {
    return false;
  }
}

/** The engine's answer for one call against one pre-parsed set, or what stopped it. */
function ask(
  facts: RuleFacts,
  set: string,
  reads: ReadonlySet<string>,
): ReturnType<typeof statefulIsAuthorized> | { type: "thrown"; message: string } {
  try {
    return statefulIsAuthorized({ ...requestFor(facts, reads), preparsedPolicySetId: set });
  } catch (error) {
    return { type: "thrown", message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * What the rule set says about one call: allowed at once when the screening policy allows it without an error,
 * else from the rules themselves. Any engine error fails closed: a `forbid` that cannot be evaluated is reported as
 * `failed`, never skipped (Cedar itself would skip it and allow).
 */
export function evaluateRules(ruleSet: RuleSet, facts: RuleFacts): RuleVerdict {
  const set = ruleSet.sets.get(facts.tool);
  if (!set) return { verdict: "allow" };
  const screened = set.screen === null ? null : ask(facts, set.screen, set.reads);
  if (
    screened?.type === "success" &&
    screened.response.decision === "allow" &&
    screened.response.diagnostics.errors.length === 0
  )
    return { verdict: "allow" };
  return verdictOf(ruleSet.rules, ask(facts, set.rules, set.reads));
}

/** The engine's answer on a set of `rules` as a verdict; any error fails closed. */
export function verdictOf(
  rules: readonly Rule[],
  answer: ReturnType<typeof statefulIsAuthorized> | { type: "thrown"; message: string },
): RuleVerdict {
  if (answer.type === "thrown") return { verdict: "failed", message: answer.message };
  if (answer.type === "failure") return { verdict: "failed", message: answer.errors.map((e) => e.message).join("; ") };
  const { decision, diagnostics } = answer.response;
  if (diagnostics.errors.length > 0) {
    const [first] = diagnostics.errors;
    return { verdict: "failed", message: `rule "${first.policyId}": ${first.error.message}` };
  }
  if (decision === "allow") return { verdict: "allow" };
  const hit = rules.filter((rule) => diagnostics.reason.includes(rule.id));
  if (hit.length === 0) return { verdict: "failed", message: "the rules denied the call without naming a rule" };
  const denying = hit.filter((rule) => rule.effect === "deny");
  if (denying.length > 0) return { verdict: "deny", rules: denying.map((rule) => ({ id: rule.id, code: rule.says })) };
  return { verdict: "hold", rules: hit.map((rule) => ({ id: rule.id, reason: rule.says })) };
}
