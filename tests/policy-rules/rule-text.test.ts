import { describe, expect, it } from "vitest";
import { ruleSummary } from "@/lib/policy-rules/summary";
import { validateRules, type Rule } from "@/lib/policy-rules/validate";
import { FRAUD_WATCH, OLD_ORDERS } from "./examples";

// What an admin reads about a rule set's text: the validation messages with the line they point at, and the
// one-line summary of each rule.

const refusal = (text: string) => {
  const validated = validateRules(text);
  expect(validated.ok).toBe(false);
  return validated.ok ? [] : validated.errors;
};

const rulesOf = (text: string): Rule[] => {
  const validated = validateRules(text);
  if (!validated.ok) throw new Error(validated.errors.join("\n"));
  return validated.rules;
};

const chained = (id: string) =>
  `@id("${id}") @hold("x") forbid (principal, action, resource) when { ${Array(120).fill("1").join(" + ")} == 1 };`;

describe("validation messages name the line", () => {
  it("a rule with too many operators is named by its own line, first or later in the set", () => {
    // Rule 1 on line 1, followed by eight more lines.
    expect(refusal(`${chained("first")}\n${OLD_ORDERS}\n\n${FRAUD_WATCH}`)).toEqual([
      "line 1: the rule here has 120 operators; a rule may have at most 100",
    ]);
    // OLD_ORDERS takes lines 1-4, a blank line, then the long rule on line 6, and FRAUD_WATCH after it.
    expect(refusal(`${OLD_ORDERS}\n\n${chained("second")}\n${FRAUD_WATCH}\n${FRAUD_WATCH}`)).toEqual([
      "line 6: the rule here has 120 operators; a rule may have at most 100",
    ]);
  });

  it("square brackets count toward the nesting depth like round ones", () => {
    const nested = (depth: number) =>
      `@id("a") @hold("x") forbid (principal, action, resource) when { ${"[".repeat(depth - 1)}1${"]".repeat(depth - 1)}.contains(1) };`;
    expect(refusal(`\n${nested(21)}`)).toEqual([
      "line 2: brackets are nested more than 20 deep; split the condition into simpler rules",
    ]);
    expect(refusal(nested(20))[0]).not.toMatch(/nested more than/);
  });

  it("an unclosed string is the parser's error with its line, its brackets are not counted as nesting", () => {
    const unclosed = `${FRAUD_WATCH}\n@id("a") @hold("x") forbid (principal, action, resource) when { context.effect == "${"(".repeat(30)} };`;
    expect(refusal(unclosed)).toEqual(["line 5: invalid token (try checking that all strings are closed properly)"]);
  });

  it("a parse error on the first line of a longer set names line 1", () => {
    expect(refusal(`@id("a") @hold("x") forbid (principal, action, resource) when { 1 + };\n${OLD_ORDERS}`)[0]).toMatch(
      /^line 1: unexpected token `}`/,
    );
  });

  it("an upstream tool's name is `server__tool` exactly: a capital first letter or a stray character is no tool", () => {
    const naming = (tool: string) => `@id("a") @hold("x") forbid (principal, action == Action::"${tool}", resource);`;
    expect(validateRules(naming("files__read_file")).ok).toBe(true);
    for (const tool of ["Files__read_file", "files__read_file!"])
      expect(refusal(naming(tool))).toEqual([
        expect.stringMatching(new RegExp(`^rule "a": there is no tool "${tool}";`)),
      ]);
  });
});

describe("a rule's summary", () => {
  it("reads the condition however it is spaced, one space between words, amounts in cents also as money", () => {
    const [rule] = rulesOf(`@id("big") @hold("Big refunds wait")
forbid (principal, action == Action::"issue_refund", resource)
when{   context.amount_cents>3000 &&
        resource.total_cents >=5000 &&
        principal.exposure_cents <= 100 } ;`);
    expect(ruleSummary(rule)).toBe(
      'Holds issue_refund calls for a supervisor when context.amount_cents>3000 (30.00) && resource.total_cents >=5000 (50.00) && principal.exposure_cents <= 100 (1.00), saying "Big refunds wait".',
    );
  });

  it("a rule without a condition applies always, even when its reason says `when { … }`", () => {
    const [rule] = rulesOf(
      '@id("closed") @deny("closed") forbid (principal, action in [Action::"issue_refund", Action::"get_order"], resource);',
    );
    expect(ruleSummary(rule)).toBe(
      "Refuses issue_refund calls and get_order calls always, whoever approves (code closed).",
    );
    const [held] = rulesOf('@id("ask") @hold("Ask when {a supervisor} is free") forbid (principal, action, resource);');
    expect(ruleSummary(held)).toBe(
      'Holds every call for a supervisor always, saying "Ask when {a supervisor} is free".',
    );
  });
});

describe("text that reads differently than it works", () => {
  it("a direction control in a string or comment is refused, naming its line; right-to-left words are not", () => {
    // Shown as `resource.status != "delivered" // not yet`, parsed as a string that no order's status equals.
    const stretched = `@id("undelivered") @hold("Undelivered orders wait")
forbid (principal, action == Action::"issue_refund", resource)
when { resource.status != "delivered\u202E \u2066// not yet\u2069 \u2066" };`;
    expect(refusal(stretched)).toEqual([
      "line 3: the invisible character U+202E changes the order the text is shown in, so the rule would read differently than it works; remove it",
    ]);
    expect(refusal(`${FRAUD_WATCH}\n// \u2067note`)).toEqual([
      expect.stringMatching(/^line 5: the invisible character U\+2067 /),
    ]);
    const hebrew = `@id("large") @hold("החזר גדול ממתין") forbid (principal, action, resource) when { context.amount_cents > 1000 };`;
    expect(rulesOf(hebrew).map((rule) => rule.says)).toEqual(["החזר גדול ממתין"]);
  });
});
