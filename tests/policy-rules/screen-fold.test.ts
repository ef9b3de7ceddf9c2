import { isAuthorized } from "@cedar-policy/cedar-wasm/nodejs";
import { describe, expect, it } from "vitest";
import { requestFor, SAMPLE_FACTS } from "@/lib/policy-rules/engine/entities";
import { compileRules, evaluateRules, unscreened } from "@/lib/policy-rules/engine/evaluate";
import { screeningPolicy } from "@/lib/policy-rules/engine/screen";
import type { RuleFacts } from "@/lib/policy-rules/schema";
import { BASE_POLICY, BASE_POLICY_ID, SCREEN_POLICY_ID, validateRules, type Rule } from "@/lib/policy-rules/validate";
import { FRAUD_WATCH, OLD_ORDERS } from "./examples";

// The folded form of a tool's rules (lib/policy-rules/engine/screen.ts): one `forbid` that fires exactly where one of
// the rules would, or null when a rule cannot be folded exactly. screen.test.ts checks that verdicts agree with
// the screen; here the screen itself is judged.

const rulesOf = (text: string): Rule[] => {
  const validated = validateRules(text);
  if (!validated.ok) throw new Error(validated.errors.join("\n"));
  return validated.rules;
};

const refund = (change: (facts: RuleFacts) => void): RuleFacts => {
  const copy = structuredClone(SAMPLE_FACTS);
  change(copy);
  return copy;
};

// 2^53 + 1: JavaScript reads it as 2^53, so a folded copy would compare 2^53 > 2^53 and never fire.
const BEYOND_EXACT = `@id("beyond-exact") @hold("x")
forbid (principal, action == Action::"issue_refund", resource) when { context.amount_cents + 9007199254740993 > 9007199254740992 };`;

/** Whether the screening policy alone, under the base permit, forbids the call (and whether it erred). */
function screenSays(rules: Rule[], facts: RuleFacts): { forbids: boolean; errors: number } {
  const screen = screeningPolicy(rules);
  if (screen === null) throw new Error("the rules did not fold");
  const answer = isAuthorized({
    ...requestFor(facts),
    policies: { staticPolicies: { [BASE_POLICY_ID]: BASE_POLICY, [SCREEN_POLICY_ID]: screen } },
  });
  if (answer.type !== "success") throw new Error(answer.errors.map((error) => error.message).join("; "));
  return { forbids: answer.response.decision === "deny", errors: answer.response.diagnostics.errors.length };
}

describe("the screening policy's folded form", () => {
  it("a rule with a number JavaScript cannot hold exactly is not folded, so it still holds the call", () => {
    const ruleSet = compileRules("screen-fold:beyond-exact", BEYOND_EXACT)!;
    expect(ruleSet.sets.get("issue_refund")!.screen).toBeNull();
    expect(evaluateRules(ruleSet, SAMPLE_FACTS)).toEqual({
      verdict: "hold",
      rules: [{ id: "beyond-exact", reason: "x" }],
    });
  });

  it("one rule that cannot be folded leaves the whole tool unfolded; a rule the parser cannot read is not folded", () => {
    expect(screeningPolicy(rulesOf(OLD_ORDERS))).not.toBeNull();
    expect(screeningPolicy(rulesOf(`${OLD_ORDERS}\n${BEYOND_EXACT}`))).toBeNull();
    expect(screeningPolicy(rulesOf(`${BEYOND_EXACT}\n${OLD_ORDERS}`))).toBeNull();
    const unreadable: Rule = { id: "broken", effect: "hold", says: "x", actions: [], text: "forbid (" };
    expect(screeningPolicy([unreadable])).toBeNull();
  });

  it("a rule without scope or condition folds to `true`: its tool is screened and every call of it is forbidden", () => {
    const always = rulesOf(
      '@id("always") @deny("closed") forbid (principal, action == Action::"issue_refund", resource);',
    );
    expect(screeningPolicy(always)!.conditions).toEqual([{ kind: "when", body: { Value: true } }]);
    const ruleSet = compileRules("screen-fold:always", always[0].text)!;
    expect(ruleSet.sets.get("issue_refund")!.screen).not.toBeNull();
    expect(evaluateRules(ruleSet, SAMPLE_FACTS)).toEqual({
      verdict: "deny",
      rules: [{ id: "always", code: "closed" }],
    });
  });

  it("a rule with an annotation of no value folds and decides like any other", () => {
    const noted = `@id("noted") @reviewed @hold("Old orders wait")
forbid (principal, action == Action::"issue_refund", resource) when { resource.age_days > 90 };`;
    const ruleSet = compileRules("screen-fold:noted", noted)!;
    expect(ruleSet.sets.get("issue_refund")!.screen).not.toBeNull();
    expect(
      evaluateRules(
        ruleSet,
        refund((f) => (f.order.age_days = 91)),
      ),
    ).toEqual({
      verdict: "hold",
      rules: [{ id: "noted", reason: "Old orders wait" }],
    });
    expect(
      evaluateRules(
        ruleSet,
        refund((f) => (f.order.age_days = 90)),
      ),
    ).toEqual({ verdict: "allow" });
  });

  it("forbids exactly the calls some rule forbids: scopes on principal and resource, `is … in`, `unless` kept", () => {
    const text = `
@id("one-agent") @hold("one agent") forbid (principal == Agent::"agt_2", action == Action::"issue_refund", resource) when { context.amount_cents > 3000 };
@id("one-order") @deny("one-order") forbid (principal, action, resource is Order in Order::"ord_3") when { context.amount_cents > 0 };
@id("in-order") @hold("order two") forbid (principal, action, resource in Order::"ord_2") unless { resource.status == "delivered" };
${FRAUD_WATCH}`;
    const rules = rulesOf(text);
    const ruleSet = unscreened(compileRules("screen-fold:scopes", text)!);
    let fired = 0;
    for (const agent of ["agt_1", "agt_2"])
      for (const order of ["ord_1", "ord_2", "ord_3"])
        for (const amount of [0, 2000, 4000])
          for (const status of ["delivered", "shipped"])
            for (const fraudWatch of [false, true]) {
              const facts = refund((f) => {
                f.agent.id = agent;
                f.order.id = order;
                f.order.status = status;
                f.call.amount_cents = amount;
                f.customer.fraud_watch = fraudWatch;
              });
              const verdict = evaluateRules(ruleSet, facts).verdict;
              const label = JSON.stringify({ agent, order, amount, status, fraudWatch });
              expect(screenSays(rules, facts), label).toEqual({ forbids: verdict !== "allow", errors: 0 });
              if (verdict !== "allow") fired += 1;
            }
    // Every rule fired somewhere and many calls passed: the comparison went both ways.
    expect(fired).toBeGreaterThan(20);
    expect(fired).toBeLessThan(72);
  });
});
