import { describe, expect, it } from "vitest";
import { checkDraft } from "@/lib/admin/rules/publishing/publish";
import { failureLines, MAX_CASES, parseCases, type RuleCase } from "@/lib/policy-rules/cases/cases";
import { EXAMPLE_RULES, FRAUD_WATCH, OLD_ORDERS, SECOND_REFUND_WAITS } from "./examples";

// The rules editor's Check (`checkDraft`, what its server action returns): each rule in a sentence, and each test case
// run against the draft with what it expected and what it got, in the words the page shows.

const BIG_REFUNDS = `@id("big-refunds")
@hold("Refunds over 30.00 wait")
forbid (principal, action in [Action::"issue_refund", Action::"get_order"], resource)
unless {   context.amount_cents <= 3000
  };`;
const NIGHT = `@id("night")
@deny("closed-at-night")
forbid (principal, action, resource) when { context.hour < 6 };`;
const ALWAYS = `@id("always-wait") @hold("Every refund waits") forbid (principal, action == Action::"issue_refund", resource);`;

function checked(text: string, cases: RuleCase[] = []) {
  const result = checkDraft(text, cases);
  if (!result.ok) throw new Error(`the draft did not validate: ${result.errors.join("; ")}`);
  return result;
}

const hold = (reason?: string, rule?: string): RuleCase["expect"] => ({ verdict: "hold", reason, rule });
const deny = (code: string, rule?: string): RuleCase["expect"] => ({ verdict: "deny", code, rule });
const allow: RuleCase["expect"] = { verdict: "allow" };

describe("the rules editor's Check", () => {
  it("says what each rule does: the effect, the tools, the condition as written, amounts also as money", () => {
    expect(checked([EXAMPLE_RULES, BIG_REFUNDS, NIGHT, ALWAYS].join("\n\n")).summaries).toEqual([
      {
        id: "old-orders-wait",
        text: 'Holds issue_refund calls for a supervisor when resource.age_days > 90, saying "Refunds on orders older than 90 days wait for a supervisor".',
      },
      {
        id: "first-refund-new-customer",
        text: `Holds issue_refund calls for a supervisor when principal.refunds_today == 0 && resource.customer.age_days < 30, saying "An agent's first refund of the day for a customer newer than 30 days waits for a supervisor".`,
      },
      {
        id: "fraud-watch",
        text: "Refuses issue_refund calls when resource.customer.fraud_watch, whoever approves (code customer-on-fraud-watch).",
      },
      {
        id: "big-refunds",
        text: 'Holds issue_refund calls and get_order calls for a supervisor unless context.amount_cents <= 3000 (30.00), saying "Refunds over 30.00 wait".',
      },
      {
        id: "night",
        text: "Refuses every call when context.hour < 6, whoever approves (code closed-at-night).",
      },
      { id: "always-wait", text: 'Holds issue_refund calls for a supervisor always, saying "Every refund waits".' },
    ]);
  });

  it("writes every compared amount in cents also as money, and leaves other numbers alone", () => {
    const text = `@id("amounts") @hold("x") forbid (principal, action, resource)
      when { context.amount_cents >= 12345 || resource.total_cents != 5 || context.hour > 3000 };`;
    expect(checked(text).summaries[0].text).toBe(
      'Holds every call for a supervisor when context.amount_cents >= 12345 (123.45) || resource.total_cents != 5 (0.05) || context.hour > 3000, saying "x".',
    );
  });

  it("runs each case on the draft: the base refund, facts laid over it, and the verdict it expected", () => {
    const cases: RuleCase[] = [
      { name: "an ordinary refund", facts: {}, expect: allow },
      { name: "an old order", facts: { order: { age_days: 91 } }, expect: hold(undefined, "old-orders-wait") },
      {
        name: "an old order, by its reason",
        facts: { order: { age_days: 91 } },
        expect: hold("Refunds on orders older than 90 days wait for a supervisor"),
      },
      { name: "fraud watch", facts: { customer: { fraud_watch: true } }, expect: deny("customer-on-fraud-watch") },
      {
        name: "fraud watch, by its rule",
        facts: { customer: { fraud_watch: true } },
        expect: deny("customer-on-fraud-watch", "fraud-watch"),
      },
      { name: "a read is not a refund", facts: { tool: "get_order", effect: "read" }, expect: allow },
    ];
    const result = checked([OLD_ORDERS, FRAUD_WATCH].join("\n"), cases);
    expect(result.cases.map(({ name, passed }) => [name, passed])).toEqual(cases.map(({ name }) => [name, true]));
    expect(result.cases[1]).toEqual({
      name: "an old order",
      passed: true,
      expected: 'hold by "old-orders-wait"',
      got: 'hold by "old-orders-wait" ("Refunds on orders older than 90 days wait for a supervisor")',
    });
    expect(failureLines(result.cases)).toEqual([]);
  });

  it("fails a case whose verdict, reason, code or rule differs, saying what it expected and what it got", () => {
    const cases: RuleCase[] = [
      { name: "expects allow", facts: { customer: { fraud_watch: true } }, expect: allow },
      { name: "expects a hold", facts: {}, expect: hold() },
      { name: "another reason", facts: { order: { age_days: 91 } }, expect: hold("Something else") },
      { name: "another rule", facts: { order: { age_days: 91 } }, expect: hold(undefined, "second-refund-waits") },
      { name: "another code", facts: { customer: { fraud_watch: true } }, expect: deny("other-code") },
      {
        name: "the code of another rule",
        facts: { customer: { fraud_watch: true } },
        expect: deny("customer-on-fraud-watch", "old-orders-wait"),
      },
      { name: "a deny is not a hold", facts: { customer: { fraud_watch: true } }, expect: hold() },
      { name: "a hold is not a deny", facts: { order: { age_days: 91 } }, expect: deny("customer-on-fraud-watch") },
      { name: "a wrong fact", facts: { order: { age_days: "old" } }, expect: allow },
    ];
    const result = checked([OLD_ORDERS, FRAUD_WATCH, SECOND_REFUND_WAITS].join("\n"), cases);
    expect(result.cases.every((one) => !one.passed)).toBe(true);
    expect(failureLines(result.cases)).toEqual([
      'case "expects allow": expected allow, got deny by "fraud-watch" (code customer-on-fraud-watch)',
      'case "expects a hold": expected hold, got allow',
      'case "another reason": expected hold ("Something else"), got hold by "old-orders-wait" ("Refunds on orders older than 90 days wait for a supervisor")',
      'case "another rule": expected hold by "second-refund-waits", got hold by "old-orders-wait" ("Refunds on orders older than 90 days wait for a supervisor")',
      'case "another code": expected deny (code other-code), got deny by "fraud-watch" (code customer-on-fraud-watch)',
      'case "the code of another rule": expected deny by "old-orders-wait" (code customer-on-fraud-watch), got deny by "fraud-watch" (code customer-on-fraud-watch)',
      'case "a deny is not a hold": expected hold, got deny by "fraud-watch" (code customer-on-fraud-watch)',
      'case "a hold is not a deny": expected deny (code customer-on-fraud-watch), got hold by "old-orders-wait" ("Refunds on orders older than 90 days wait for a supervisor")',
      'case "a wrong fact": expected allow, got no verdict: facts.order.age_days: Invalid input: expected number, received string',
    ]);
  });

  it("names every rule that holds a call, and a case passes on any one of them", () => {
    const result = checked([OLD_ORDERS, SECOND_REFUND_WAITS].join("\n"), [
      {
        name: "both hold",
        facts: { order: { age_days: 91 }, agent: { refunds_today: 1 } },
        expect: hold("An agent's second refund of the day waits for a supervisor", "second-refund-waits"),
      },
    ]);
    expect(result.cases).toEqual([
      {
        name: "both hold",
        passed: true,
        expected: `hold by "second-refund-waits" ("An agent's second refund of the day waits for a supervisor")`,
        got: `hold by "old-orders-wait" ("Refunds on orders older than 90 days wait for a supervisor"), hold by "second-refund-waits" ("An agent's second refund of the day waits for a supervisor")`,
      },
    ]);
  });

  it("refuses a draft that does not validate with its errors, and runs no case", () => {
    expect(
      checkDraft('@id("a") permit (principal, action, resource);', [{ name: "x", facts: {}, expect: allow }]),
    ).toEqual({
      ok: false,
      code: "rules.invalid",
      errors: [expect.stringContaining("only `forbid` rules are allowed")],
    });
  });
});

describe("test cases as the editor's JSON", () => {
  it("takes an empty text as no case, and the page's JSON as cases with their defaults", () => {
    expect(parseCases("  \n")).toEqual({ ok: true, cases: [] });
    expect(parseCases('[{"name": " old ", "expect": {"verdict": "allow"}}]')).toEqual({
      ok: true,
      cases: [{ name: "old", facts: {}, expect: { verdict: "allow" } }],
    });
  });

  it("says which case is wrong and where, in words", () => {
    expect(parseCases("[{")).toEqual({
      ok: false,
      errors: [expect.stringMatching(/^the test cases are not JSON: /)],
    });
    expect(parseCases('{"name": "x"}')).toEqual({
      ok: false,
      errors: ["the test cases: Invalid input: expected array, received object"],
    });
    const [problem] = (
      parseCases(
        '[{"name": "a", "expect": {"verdict": "allow"}}, {"name": "b", "expect": {"verdict": "deny", "code": ""}}]',
      ) as { errors: string[] }
    ).errors;
    expect(problem).toBe("case 2 (expect.code): Too small: expected string to have >=1 characters");
    const many = JSON.stringify(
      Array.from({ length: MAX_CASES + 1 }, (_, index) => ({ name: `c${index}`, expect: allow })),
    );
    expect(parseCases(many)).toEqual({
      ok: false,
      errors: [`the test cases: Too big: expected array to have <=${MAX_CASES} items`],
    });
  });
});
