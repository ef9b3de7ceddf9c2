import { describe, expect, it } from "vitest";
import { compileRules, evaluateRules } from "@/lib/policy-rules/engine/evaluate";
import { SAMPLE_FACTS } from "@/lib/policy-rules/engine/entities";
import { RULE_LIMITS } from "@/lib/policy-rules/engine/limits";
import { RULE_ACTIONS, type RuleFacts } from "@/lib/policy-rules/schema";
import { validateRules } from "@/lib/policy-rules/validate";
import { EXAMPLE_RULES, FRAUD_WATCH } from "./examples";

const facts = (change: (facts: RuleFacts) => void): RuleFacts => {
  const copy = structuredClone(SAMPLE_FACTS);
  copy.agent.refunds_today = 1;
  copy.customer.age_days = 400;
  change(copy);
  return copy;
};

const refusal = (text: string) => {
  const validated = validateRules(text);
  expect(validated.ok).toBe(false);
  return validated.ok ? [] : validated.errors;
};

describe("rule engine (Cedar)", () => {
  const ruleSet = compileRules("engine-test:1", EXAMPLE_RULES)!;

  it("the three example rules validate and hold or deny on their facts only", () => {
    expect(ruleSet.rules.map((rule) => [rule.id, rule.effect])).toEqual([
      ["old-orders-wait", "hold"],
      ["first-refund-new-customer", "hold"],
      ["fraud-watch", "deny"],
    ]);
    expect(
      evaluateRules(
        ruleSet,
        facts(() => {}),
      ),
    ).toEqual({ verdict: "allow" });
    expect(
      evaluateRules(
        ruleSet,
        facts((f) => (f.order.age_days = 91)),
      ),
    ).toEqual({
      verdict: "hold",
      rules: [{ id: "old-orders-wait", reason: "Refunds on orders older than 90 days wait for a supervisor" }],
    });
    expect(
      evaluateRules(
        ruleSet,
        facts((f) => ((f.customer.age_days = 3), (f.agent.refunds_today = 0))),
      ),
    ).toMatchObject({
      verdict: "hold",
      rules: [{ id: "first-refund-new-customer" }],
    });
    expect(
      evaluateRules(
        ruleSet,
        facts((f) => ((f.customer.fraud_watch = true), (f.order.age_days = 200))),
      ),
    ).toEqual({ verdict: "deny", rules: [{ id: "fraud-watch", code: "customer-on-fraud-watch" }] });
    expect(
      evaluateRules(
        ruleSet,
        facts((f) => ((f.tool = "get_order"), (f.customer.fraud_watch = true))),
      ),
    ).toEqual({
      verdict: "allow",
    });
  });

  it("refuses a malformed rule set with the line it breaks on", () => {
    expect(
      refusal('@id("a") @hold("x") forbid (principal, action, resource) when { resource.age_days > };')[0],
    ).toMatch(/^line 1: /);
    expect(refusal(`${FRAUD_WATCH}\n\n@id("b") @hold("x") forbid (principal, action, resource) when { };`)[0]).toMatch(
      /^line 6: /,
    );
  });

  it("refuses a template (a rule with slots), and takes exactly as many rules as a set may have", () => {
    expect(refusal('@id("t") @hold("x") forbid (principal == ?principal, action, resource);')).toEqual([
      "templates (rules with ?principal or ?resource slots) are not supported",
    ]);
    const rules = Array.from(
      { length: RULE_LIMITS.rules },
      (_, index) => `@id("r${index}") @hold("x") forbid (principal, action, resource) when { false };`,
    );
    expect(validateRules(rules.join("\n")).ok).toBe(true);
  });

  it("refuses a permit, a rule without @id, and one with both or neither of @hold and @deny", () => {
    expect(refusal('@id("a") @hold("x") permit (principal, action, resource);')[0]).toMatch(/only `forbid` rules/);
    expect(refusal('@hold("x") forbid (principal, action, resource);')[0]).toMatch(/needs @id/);
    expect(refusal('@id("a") forbid (principal, action, resource);')[0]).toMatch(/exactly one of @hold/);
    expect(refusal('@id("a") @hold("x") @deny("y") forbid (principal, action, resource);')[0]).toMatch(/exactly one/);
  });

  it("refuses a rule the schema does not type: an unknown attribute, a wrong type, an unknown tool", () => {
    expect(refusal('@id("a") @hold("x") forbid (principal, action, resource) when { resource.age > 3 };')[0]).toMatch(
      /^rule "a": .*age/,
    );
    expect(
      refusal('@id("a") @hold("x") forbid (principal, action, resource) when { resource.status > 3 };')[0],
    ).toMatch(/^rule "a": /);
    expect(refusal('@id("a") @hold("x") forbid (principal, action == Action::"wire_money", resource);')[0]).toMatch(
      /no tool "wire_money"/,
    );
  });

  it("names a missing attribute with the ones there are and the one it meant by name, not by spelling", () => {
    // Once, though Cedar reports it for every tool the rule applies to.
    expect(refusal('@id("a") @hold("x") forbid (principal, action, resource) when { context.amount > 1 };')).toEqual([
      'rule "a": context has no attribute "amount": did you mean "amount_cents"? Its attributes are effect, amount_cents, conversation_writes, conversation_spent_cents, hour, weekday, args.',
    ]);
    const refund = (condition: string) =>
      refusal(
        `@id("a") @hold("x") forbid (principal, action == Action::"issue_refund", resource) when { ${condition} };`,
      )[0];
    expect(refund("context.amount > 100")).toBe(
      'rule "a": context has no attribute "amount": did you mean "amount_cents"? Its attributes are effect, amount_cents, conversation_writes, conversation_spent_cents, hour, weekday, args.',
    );
    expect(refund("context.args.amount > 100")).toBe(
      'rule "a": context.args of issue_refund has no attribute "amount": did you mean "amount_cents"? Its attributes are order_id, amount_cents, currency, reason.',
    );
    expect(refund("resource.customer.fraud")).toMatch(
      /^rule "a": resource\.customer has no attribute "fraud": did you mean "fraud_watch"\?/,
    );
    expect(refund('principal.team == "x"')).toBe(
      'rule "a": principal has no attribute "team". Its attributes are refunds_today, role, age_days, exposure_cents.',
    );
  });

  it("refuses oversized and deeply nested sets before the parser sees them (the wasm parser would overflow)", () => {
    const deep = `@id("a") @hold("x") forbid (principal, action, resource) when { ${"(".repeat(1000)}true${")".repeat(1000)} };`;
    expect(refusal(deep)[0]).toMatch(/nested more than 20 deep/);
    const long = `@id("a") @hold("x") forbid (principal, action, resource) when { ${Array(400).fill("1").join(" + ")} == 1 };`;
    expect(refusal(long)[0]).toMatch(/operators; a rule may have at most 100/);
    const nestedIfs = `@id("a") @hold("x") forbid (principal, action, resource) when { ${"if true then ".repeat(30)}true${" else false".repeat(30)} };`;
    expect(refusal(nestedIfs)[0]).toMatch(/if-expressions/);
    expect(refusal("// x\n".repeat(10_000))[0]).toMatch(/at most 40000 are allowed/);
    const many = Array.from({ length: 101 }, (_, i) => `@id("r${i}") @hold("x") forbid (principal, action, resource);`);
    expect(refusal(many.join("\n"))[0]).toMatch(/101 rules; at most 100/);
  });

  it("refuses a set chaining thousands of operators before the engine parses the whole set (its stack overflowed)", () => {
    const rule = (body: string) => `@id("a") @hold("x") forbid (principal, action, resource) when { ${body} };`;
    const chains = [
      rule(`${Array(9000).fill("1").join("+")} == 1`),
      rule(`context${'[""]'.repeat(9000)} == 1`),
      rule(`context${".a".repeat(9000)}`),
      `${FRAUD_WATCH}\n// a second rule, unterminated\n@id("b") @hold("x") forbid (principal, action, resource) when { ${Array(9000).fill("1").join("+")}`,
    ];
    for (const text of chains) {
      expect(text.length).toBeLessThan(40_000);
      expect(refusal(text)[0]).toMatch(/^line \d+: the rule here has \d+ operators; a rule may have at most 100$/);
    }
    expect(refusal(chains[3])[0]).toMatch(/^line 6: /);
    expect(validateRules(EXAMPLE_RULES).ok).toBe(true);
  });

  it("holds each bound exactly at its limit, counts no bracket or operator inside a string or a comment, and names the line", () => {
    const when = (condition: string) =>
      `@id("a") @hold("x") forbid (principal, action == Action::"issue_refund", resource) when { ${condition} };`;
    // 20 brackets deep passes (the condition's brace is the first), 21 does not.
    const nested = (depth: number) => when(`${"(".repeat(depth - 1)}true${")".repeat(depth - 1)}`);
    expect(validateRules(nested(RULE_LIMITS.depth)).ok).toBe(true);
    expect(refusal(`\n\n${nested(RULE_LIMITS.depth + 1)}`)).toEqual([
      "line 3: brackets are nested more than 20 deep; split the condition into simpler rules",
    ]);
    // Brackets, operators and `if` in a reason, a string or a comment are text, and a reason's line breaks count.
    const quoted = `@id("q") @hold("((((((((((((((((((((((( + + + if if\n\\" ))))")
// (((((((((((((((((((((((( && && if
forbid (principal, action == Action::"issue_refund", resource) when { context.args.reason == "${"(if ".repeat(120)}" };`;
    expect(validateRules(quoted).ok).toBe(true);
    expect(refusal(`${quoted}\n${nested(RULE_LIMITS.depth + 1)}`)[0]).toMatch(/^line 5: brackets are nested/);
    // 100 operators and 20 `if`s in a rule pass; one more of either does not.
    // The rule's own `==` (its tool), n - 2 `+` and one `>=`: n operators.
    const operators = (n: number) =>
      when(
        `${Array(n - 1)
          .fill("1")
          .join(" + ")} >= 0`,
      );
    expect(validateRules(operators(RULE_LIMITS.operatorsPerRule)).ok).toBe(true);
    expect(refusal(operators(RULE_LIMITS.operatorsPerRule + 1))[0]).toBe(
      "line 1: the rule here has 101 operators; a rule may have at most 100",
    );
    const ifs = (count: number) => when(`${"if true then ".repeat(count)}true${" else false".repeat(count)}`);
    expect(validateRules(ifs(RULE_LIMITS.ifsPerRule)).ok).toBe(true);
    expect(refusal(ifs(RULE_LIMITS.ifsPerRule + 1))[0]).toBe(
      "line 1: the rule here has 21 if-expressions; a rule may have at most 20",
    );
    // A rule of 2,000 characters passes, one of 2,001 does not; a set of 40,000 passes.
    const sized = (length: number) => {
      const text = `@id("s") @hold("") forbid (principal, action == Action::"issue_refund", resource);`;
      return text.replace('@hold("")', `@hold("${"r".repeat(length - text.length)}")`);
    };
    expect(refusal(sized(RULE_LIMITS.ruleChars))).toEqual(['rule "s": the @hold reason must be 1 to 200 characters']);
    expect(refusal(sized(RULE_LIMITS.ruleChars + 1))).toEqual([
      "rule 1: it is 2001 characters long; a rule may have at most 2000",
    ]);
    const padded = `${FRAUD_WATCH}\n${"// padding\n".repeat(3500)}`;
    expect(validateRules(padded.padEnd(RULE_LIMITS.textChars, " ")).ok).toBe(true);
    expect(refusal(padded.padEnd(RULE_LIMITS.textChars + 1, " "))).toEqual([
      "the rule set is 40001 characters long; at most 40000 are allowed",
    ]);
  });

  it("refuses a rule under a built-in policy's id (it replaced the base permit)", () => {
    for (const id of ["toolgate-base", "toolgate-screen", "toolgate-anything"]) {
      const text = `${FRAUD_WATCH}\n@id("${id}") @hold("x") forbid (principal, action, resource) when { false };`;
      expect(refusal(text)).toEqual([
        `rule 2: the id "${id}" is reserved: ids starting with "toolgate-" are toolgate's own; choose another`,
      ]);
    }
  });

  it("takes an id, a hold's reason and a deny's code up to their limits, and refuses each past them in words", () => {
    const rule = (id: string, says: string) =>
      `@id("${id}") ${says} forbid (principal, action == Action::"issue_refund", resource) when { false };`;
    const accepted = validateRules(
      [rule(`a${"-".repeat(59)}`, `@hold("${"r".repeat(200)}")`), rule("0-deny", `@deny("${"c".repeat(40)}")`)].join(
        "\n",
      ),
    );
    expect(accepted.ok && accepted.rules.map(({ id, effect, says }) => [id.length, effect, says.length])).toEqual([
      [60, "hold", 200],
      [6, "deny", 40],
    ]);

    const idRefused = 'rule 1: it needs @id("…"): lower-case letters, digits and dashes, at most 60 characters';
    for (const id of [`a${"-".repeat(60)}`, "Upper", "-dash-first", "under_score", "a b"])
      expect(refusal(rule(id, '@hold("x")'))).toEqual([idRefused]);
    for (const reason of ["", "   ", "r".repeat(201)])
      expect(refusal(rule("long", `@hold("${reason}")`))).toEqual([
        'rule "long": the @hold reason must be 1 to 200 characters',
      ]);
    for (const code of ["c".repeat(41), "Upper", "-dash-first", "under_score", ""])
      expect(refusal(rule("coded", `@deny("${code}")`))).toEqual([
        'rule "coded": the @deny code must be lower-case letters, digits and dashes, at most 40',
      ]);
  });

  it("refuses an id used twice and a tool that does not exist, naming the rule and the tools there are", () => {
    expect(refusal(`${FRAUD_WATCH}\n${FRAUD_WATCH}`)).toEqual(['rule 2: the id "fraud-watch" is used twice']);
    expect(
      refusal('@id("a") @hold("x") forbid (principal, action in [Action::"get_order", Action::"nope"], resource);'),
    ).toEqual([`rule "a": there is no tool "nope"; the tools are ${RULE_ACTIONS.join(", ")}`]);
  });

  it("refuses a rule that fails when evaluated, and an engine error at call time fails closed", () => {
    const overflow =
      '@id("overflow") @hold("x") forbid (principal, action, resource) when { context.amount_cents * 9223372036854775807 > 0 };';
    // Valid for the trial facts (amount 0), failing for a real amount: the call is never allowed.
    const ruleSet = compileRules("engine-test:overflow", overflow)!;
    expect(
      evaluateRules(
        ruleSet,
        facts((f) => (f.call.amount_cents = 8000)),
      ),
    ).toEqual({ verdict: "failed", message: expect.stringMatching(/^rule "overflow": .*overflow/) });
    expect(
      refusal('@id("a") @hold("x") forbid (principal, action, resource) when { 9223372036854775807 + 1 > 0 };')[0],
    ).toMatch(/fails to evaluate/);
  });

  it("a rule on every tool judges every tool, also those no other rule of the set names", () => {
    const night =
      '@id("night") @deny("closed-at-night") forbid (principal, action, resource) when { context.hour < 6 };';
    const ruleSet = compileRules("engine-test:every-tool", `${FRAUD_WATCH}\n${night}`)!;
    expect([...ruleSet.sets.keys()].sort()).toEqual([...RULE_ACTIONS].sort());
    for (const tool of RULE_ACTIONS) {
      const atNight = facts((f) => ((f.tool = tool), (f.call.hour = 3)));
      expect(evaluateRules(ruleSet, atNight), tool).toEqual({
        verdict: "deny",
        rules: [{ id: "night", code: "closed-at-night" }],
      });
      const atNoon = facts((f) => ((f.tool = tool), (f.call.hour = 12)));
      expect(evaluateRules(ruleSet, atNoon), tool).toEqual({ verdict: "allow" });
    }
    // The fraud rule names the refund only: another tool on a watched customer passes.
    const watched = (tool: string) =>
      facts((f) => ((f.tool = tool), (f.call.hour = 12), (f.customer.fraud_watch = true)));
    expect(evaluateRules(ruleSet, watched("issue_refund"))).toMatchObject({ verdict: "deny" });
    expect(evaluateRules(ruleSet, watched("get_order"))).toEqual({ verdict: "allow" });
  });
});
