import { describe, expect, it } from "vitest";
import { failureLines, runCases, type RuleCase } from "@/lib/policy-rules/cases/cases";
import { validateRules, type Rule } from "@/lib/policy-rules/validate";

// A rule set's own test cases (issue 38) as the rules page and `npm run policy:test` report them: each case's
// outcome, what it expected and what the rules gave, in words.

const rulesOf = (text: string): Rule[] => {
  const validated = validateRules(text);
  if (!validated.ok) throw new Error(validated.errors.join("\n"));
  return validated.rules;
};

const outcome = (text: string, cases: RuleCase[]) =>
  runCases(rulesOf(text), cases).map(({ name, passed, got }) => ({ name, passed, got }));

describe("a rule set's cases", () => {
  it("a case naming another tool starts from that tool's empty arguments; one naming the refund keeps the refund's", () => {
    const text = `
@id("po-box") @hold("PO boxes wait") forbid (principal, action == Action::"update_shipping_address", resource)
when { context.args.line1 like "PO Box*" };
@id("big-refund") @hold("Big refunds wait") forbid (principal, action == Action::"issue_refund", resource)
when { context.args.amount_cents > 500 };`;
    expect(
      outcome(text, [
        { name: "a street", facts: { tool: "update_shipping_address" }, expect: { verdict: "allow" } },
        {
          name: "a PO box",
          facts: { tool: "update_shipping_address", args: { line1: "PO Box 12" } },
          expect: { verdict: "hold" },
        },
        { name: "the base refund, named", facts: { tool: "issue_refund" }, expect: { verdict: "hold" } },
      ]),
    ).toEqual([
      { name: "a street", passed: true, got: "allow" },
      { name: "a PO box", passed: true, got: 'hold by "po-box" ("PO boxes wait")' },
      { name: "the base refund, named", passed: true, got: 'hold by "big-refund" ("Big refunds wait")' },
    ]);
  });

  it("a fact given as a value where the facts hold an object is named, not merged into the object", () => {
    const [result] = runCases(rulesOf('@id("a") @hold("x") forbid (principal, action, resource) when { false };'), [
      { name: "agent as text", facts: { agent: "bob" }, expect: { verdict: "allow" } },
    ]);
    expect(result).toEqual({
      name: "agent as text",
      passed: false,
      expected: "allow",
      got: "no verdict: facts.agent: Invalid input: expected object, received string",
    });
  });

  it("a case whose rule fails to evaluate fails, with the engine's error in its words", () => {
    const overflow =
      '@id("overflow") @hold("x") forbid (principal, action, resource) when { context.amount_cents * 9223372036854775807 > 0 };';
    const results = runCases(rulesOf(overflow), [{ name: "any refund", facts: {}, expect: { verdict: "hold" } }]);
    expect(results).toEqual([
      {
        name: "any refund",
        passed: false,
        expected: "hold",
        got: expect.stringMatching(/^failed \(rule "overflow": .+\)$/),
      },
    ]);
    expect(failureLines(results)).toEqual([expect.stringMatching(/^case "any refund": expected hold, got failed \(/)]);
  });

  it("a deny by two rules names both, meets a case expecting either code, and an allow never meets a deny", () => {
    const text = `
@id("deny-a") @deny("code-a") forbid (principal, action, resource) when { context.amount_cents > 500 };
@id("deny-b") @deny("code-b") forbid (principal, action, resource) when { resource.total_cents > 500 };`;
    const small = { call: { amount_cents: 100 }, order: { total_cents: 100 } };
    expect(
      outcome(text, [
        { name: "both deny", facts: {}, expect: { verdict: "deny", code: "code-b" } },
        { name: "by the second rule", facts: {}, expect: { verdict: "deny", code: "code-a", rule: "deny-a" } },
        { name: "nothing denies", facts: small, expect: { verdict: "deny", code: "code-a" } },
      ]),
    ).toEqual([
      { name: "both deny", passed: true, got: 'deny by "deny-a" (code code-a), deny by "deny-b" (code code-b)' },
      {
        name: "by the second rule",
        passed: true,
        got: 'deny by "deny-a" (code code-a), deny by "deny-b" (code code-b)',
      },
      { name: "nothing denies", passed: false, got: "allow" },
    ]);
  });

  it("every case fails when the engine cannot load the rules, saying so", () => {
    const unloadable: Rule = { id: "broken", effect: "hold", says: "x", actions: ["issue_refund"], text: "forbid (" };
    expect(
      runCases(
        [unloadable],
        [
          { name: "one", facts: {}, expect: { verdict: "allow" } },
          { name: "two", facts: {}, expect: { verdict: "hold" } },
        ],
      ),
    ).toEqual([
      { name: "one", passed: false, expected: "allow", got: "the rule engine could not load the set" },
      { name: "two", passed: false, expected: "hold", got: "the rule engine could not load the set" },
    ]);
  });
});
