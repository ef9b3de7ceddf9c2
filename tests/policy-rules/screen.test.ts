import { describe, expect, it } from "vitest";
import { factsRead, SAMPLE_FACTS } from "@/lib/policy-rules/engine/entities";
import { compileRules, evaluateRules, unscreened } from "@/lib/policy-rules/engine/evaluate";
import { RULE_ACTIONS, ruleArgs, RULES_SCHEMA, type RuleFacts } from "@/lib/policy-rules/schema";
import { validateRules } from "@/lib/policy-rules/validate";
import { EXAMPLE_RULES } from "./examples";

// The screening policy (lib/policy-rules/engine/screen.ts) only decides when a call trips no rule and nothing errs; every
// verdict must be the one the rules alone give. Checked over many random calls against the same set with the
// screen taken away, for rules of every shape the language allows: scopes on principal and resource, `unless`,
// `has`, sets, and conditions that overflow on some calls.

const SHAPES = `
@id("scoped-agent") @hold("one agent") forbid (principal == Agent::"agt_2", action == Action::"issue_refund", resource) when { context.amount_cents > 3000 };
@id("scoped-order") @deny("one-order") forbid (principal, action, resource == Order::"ord_3");
@id("is-order") @hold("big orders") forbid (principal, action in [Action::"issue_refund", Action::"update_shipping_address"], resource is Order) when { resource.total_cents > 20000 } unless { resource.status == "delivered" };
@id("overflows") @hold("huge") forbid (principal, action == Action::"issue_refund", resource) when { context.amount_cents * 1000000000000000 > 5 };
@id("sets") @hold("currencies") forbid (principal, action, resource) when { ["EUR", "GBP"].contains(resource.currency) && context.conversation_writes >= 2 };
@id("writes") @deny("too-many-writes") forbid (principal, action, resource) when { context.conversation_writes > 4 || context.conversation_spent_cents > 50000 };
@id("new-facts") @hold("refunded often, out of hours") forbid (principal, action == Action::"issue_refund", resource) when { resource.customer.refunds_7d >= 2 && context.args.reason == "other" && (context.hour < 9 || context.hour >= 17) };
@id("new-agent") @deny("new-agent") forbid (principal, action == Action::"issue_refund", resource) when { principal.age_days < 7 && principal.role == "AGENT" && principal.exposure_cents + context.args.amount_cents > 20000 };
`;

/** A deterministic stream of numbers in [0, 1), so a failure names a case that can be run again. */
function random(seed: number) {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
}

function someFacts(next: () => number): RuleFacts {
  const pick = <T>(values: readonly T[]) => values[Math.floor(next() * values.length)];
  const tool = pick(RULE_ACTIONS);
  return {
    tool,
    effect: "irreversible",
    agent: {
      id: pick(["agt_1", "agt_2"]),
      refunds_today: pick([0, 1, 5]),
      role: pick(["AGENT", "SUPERVISOR"]),
      age_days: pick([0, 6, 7, 300]),
      exposure_cents: pick([0, 20_000]),
    },
    customer: {
      id: pick(["cus_1", "cus_2"]),
      fraud_watch: next() < 0.2,
      age_days: pick([1, 29, 30, 400]),
      refunds_7d: pick([0, 1, 2, 3]),
      refunded_cents_7d: pick([0, 5000, 30_000]),
    },
    order: {
      ...SAMPLE_FACTS.order,
      id: pick(["ord_1", "ord_2", "ord_3"]),
      status: pick(["delivered", "shipped"]),
      currency: pick(["USD", "EUR", "GBP"]),
      total_cents: pick([5000, 25000]),
      age_days: pick([10, 90, 91, 400]),
    },
    call: {
      amount_cents: pick([0, 1, 2000, 4000, 10_000]),
      conversation_writes: pick([0, 2, 5]),
      conversation_spent_cents: pick([0, 60_000]),
      hour: pick([0, 8, 17, 23]),
      weekday: pick([1, 6, 7]),
    },
    args: ruleArgs(tool, { amount_cents: pick([1, 4000]), reason: pick(["damaged", "other"]), currency: "USD" }),
  };
}

describe("the screening policy", () => {
  it("gives the verdict the rules alone give, on 3,000 random calls over rules of every shape", () => {
    const screened = compileRules("screen-test:shapes", `${EXAMPLE_RULES}\n${SHAPES}`)!;
    const refunds = screened.sets.get("issue_refund")!;
    // The overflowing rule's numbers fit JavaScript, so every tool's rules are folded into a screen.
    expect([...screened.sets.values()].every((set) => set.screen !== null)).toBe(true);
    expect(refunds.screen).not.toBe(refunds.rules);
    const plain = unscreened(screened);
    // The engine is handed only the facts the rules name; handed every fact (every name of the schema), it agrees.
    const everyFact = {
      ...plain,
      sets: new Map([...plain.sets].map(([tool, set]) => [tool, { ...set, reads: factsRead([RULES_SCHEMA]) }])),
    };
    expect(refunds.reads.size).toBeLessThan(factsRead([RULES_SCHEMA]).size);
    const next = random(26);
    const seen = new Set<string>();
    for (let index = 0; index < 3000; index++) {
      const facts = someFacts(next);
      const verdict = evaluateRules(screened, facts);
      expect(verdict, JSON.stringify(facts)).toEqual(evaluateRules(plain, facts));
      expect(verdict, JSON.stringify(facts)).toEqual(evaluateRules(everyFact, facts));
      seen.add(verdict.verdict);
    }
    // The cases reached every verdict, an evaluation error included.
    expect([...seen].sort()).toEqual(["allow", "deny", "failed", "hold"]);
  });

  it("a rule nested deeper than the engine's JSON form allows is not folded, and the engine keeps working", () => {
    // Within the rule limits (lib/policy-rules/engine/limits.ts): 98 chained `+`, past the 128 levels the engine reads.
    const chained = `context.amount_cents + ${Array.from({ length: 97 }, () => "1").join(" + ")} > 5`;
    const text = `${EXAMPLE_RULES}\n@id("chained") @hold("long sums") forbid (principal, action == Action::"issue_refund", resource) when { ${chained} };`;
    expect(validateRules(text).ok).toBe(true);
    const ruleSet = compileRules("screen-test:deep", text)!;
    expect(ruleSet.sets.get("issue_refund")!.screen).toBeNull();
    const facts = structuredClone(SAMPLE_FACTS);
    facts.customer.age_days = 400;
    expect(evaluateRules(ruleSet, facts)).toEqual({ verdict: "hold", rules: [{ id: "chained", reason: "long sums" }] });
    const after = compileRules("screen-test:after-deep", EXAMPLE_RULES)!;
    expect(after.sets.get("issue_refund")!.screen).not.toBeNull();
    facts.order.age_days = 91;
    expect(evaluateRules(after, facts)).toMatchObject({ verdict: "hold", rules: [{ id: "old-orders-wait" }] });
  });

  it("a rule with a number beyond JavaScript's exact integers is not folded; its tool is judged by the rules alone", () => {
    const ruleSet = compileRules(
      "screen-test:wide",
      '@id("wide") @hold("x") forbid (principal, action == Action::"issue_refund", resource) when { context.amount_cents * 9223372036854775807 > 0 };',
    )!;
    expect(ruleSet.sets.get("issue_refund")!.screen).toBeNull();
    const facts = structuredClone(SAMPLE_FACTS);
    facts.call.amount_cents = 8000;
    expect(evaluateRules(ruleSet, facts)).toMatchObject({ verdict: "failed" });
  });
});
