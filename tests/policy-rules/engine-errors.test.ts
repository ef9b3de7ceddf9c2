import type { AuthorizationAnswer } from "@cedar-policy/cedar-wasm/nodejs";
import { describe, expect, it } from "vitest";
import { requestFor, SAMPLE_FACTS } from "@/lib/policy-rules/engine/entities";
import { compileDraft, compileRules, evaluateRules, verdictOf } from "@/lib/policy-rules/engine/evaluate";
import type { RuleFacts } from "@/lib/policy-rules/schema";
import { validateRules, type Rule } from "@/lib/policy-rules/validate";
import { FRAUD_WATCH, OLD_ORDERS } from "./examples";

// What the engine does when evaluation goes wrong, and which rules each tool's pre-parsed set holds. Every error
// fails closed: the gateway receives a `failed` verdict with the engine's words, never an exception and never allow.

const rulesOf = (text: string): Rule[] => {
  const validated = validateRules(text);
  if (!validated.ok) throw new Error(validated.errors.join("\n"));
  return validated.rules;
};

const BIG_REFUNDS = `@id("big-refunds") @hold("Big refunds wait")
forbid (principal, action == Action::"issue_refund", resource) when { context.amount_cents > 5000 };`;

const facts = (change: (facts: RuleFacts) => void): RuleFacts => {
  const copy = structuredClone(SAMPLE_FACTS);
  change(copy);
  return copy;
};

describe("the engine's error paths fail closed", () => {
  const ruleSet = compileRules("engine-errors:big-refunds", `${BIG_REFUNDS}\n${FRAUD_WATCH}`)!;

  it("a call the engine throws on (a fact read as a BigInt) is failed with the engine's message, not thrown", () => {
    const bigint = facts((f) => (f.call.amount_cents = 8000n as unknown as number));
    const verdict = evaluateRules(ruleSet, bigint);
    expect(verdict).toEqual({ verdict: "failed", message: expect.stringMatching(/unwrap_throw/) });
    // The same rule set still decides the next call.
    expect(
      evaluateRules(
        ruleSet,
        facts((f) => (f.call.amount_cents = 8000)),
      ),
    ).toEqual({
      verdict: "hold",
      rules: [{ id: "big-refunds", reason: "Big refunds wait" }],
    });
  });

  it("a fact the engine cannot read (an amount that is not a whole number) fails the call with the engine's words", () => {
    const fraction = facts((f) => (f.call.amount_cents = 8000.5));
    expect(evaluateRules(ruleSet, fraction)).toEqual({
      verdict: "failed",
      message: "data did not match any variant of untagged enum RawCedarValueJson",
    });
  });

  it("a deny that names no rule of the set is failed, never a hold without a reason", () => {
    const rules = rulesOf(FRAUD_WATCH);
    const answer = (reason: string[]): AuthorizationAnswer => ({
      type: "success",
      response: { decision: "deny", diagnostics: { reason, errors: [] } },
      warnings: [],
    });
    expect(verdictOf(rules, answer(["some-other-rule"]))).toEqual({
      verdict: "failed",
      message: "the rules denied the call without naming a rule",
    });
    expect(verdictOf(rules, answer(["fraud-watch"]))).toEqual({
      verdict: "deny",
      rules: [{ id: "fraud-watch", code: "customer-on-fraud-watch" }],
    });
  });
});

describe("pre-parsed sets", () => {
  it("drafts in different slots are each judged by their own rules", () => {
    const holds = compileDraft("engine-errors-a", rulesOf(BIG_REFUNDS))!;
    const denies = compileDraft(
      "engine-errors-b",
      rulesOf(
        BIG_REFUNDS.replace(
          '@id("big-refunds") @hold("Big refunds wait")',
          '@id("no-big-refunds") @deny("big-refund")',
        ),
      ),
    )!;
    const big = facts((f) => (f.call.amount_cents = 8000));
    expect(evaluateRules(holds, big)).toEqual({
      verdict: "hold",
      rules: [{ id: "big-refunds", reason: "Big refunds wait" }],
    });
    expect(evaluateRules(denies, big)).toEqual({
      verdict: "deny",
      rules: [{ id: "no-big-refunds", code: "big-refund" }],
    });
  });

  it("a rule on upstream tools adds no built-in tool to the set, and each tool's set reads only its own rules' facts", () => {
    const upstream =
      '@id("no-etc") @deny("etc") forbid (principal, action == Action::"files__write_file", resource) when { context.args has path };';
    const night =
      '@id("night") @deny("closed-at-night") forbid (principal, action == Action::"get_order", resource) when { context.hour < 6 };';
    const ruleSet = compileRules("engine-errors:own-rules", [FRAUD_WATCH, OLD_ORDERS, upstream, night].join("\n"))!;
    expect([...ruleSet.sets.keys()].sort()).toEqual(["get_order", "issue_refund"]);
    expect([...ruleSet.sets.get("get_order")!.reads]).toEqual(["hour"]);
    expect([...ruleSet.sets.get("issue_refund")!.reads].sort()).toEqual(["age_days", "customer", "fraud_watch"]);
  });

  it("the engine is handed only the facts the rules read; without a list, every fact", () => {
    const request = requestFor(SAMPLE_FACTS, new Set(["hour", "fraud_watch"]));
    expect(request.context).toEqual({ hour: 0 });
    expect(request.entities.map((entity) => entity.attrs)).toEqual([{}, { fraud_watch: false }, {}]);
    const everything = requestFor(SAMPLE_FACTS);
    expect(Object.keys(everything.context).sort()).toEqual(
      ["amount_cents", "args", "conversation_spent_cents", "conversation_writes", "effect", "hour", "weekday"].sort(),
    );
    expect(everything.entities[0].attrs).toEqual({ refunds_today: 0, role: "AGENT", age_days: 0, exposure_cents: 0 });
  });
});
