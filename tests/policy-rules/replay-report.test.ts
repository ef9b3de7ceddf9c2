import { describe, expect, it } from "vitest";
import type { RuleVerdict } from "@/lib/policy-rules/engine/evaluate";
import { CASE_BASE } from "@/lib/policy-rules/cases/cases";
import {
  decidedBy,
  differences,
  mergeReports,
  moneyOf,
  reportText,
  type RecordedDecision,
} from "@/lib/policy-rules/replay/replay";

// The difference report a replay and a shadow set give an admin (and `npm run policy:replay` prints): which recorded
// calls a rule set would decide differently, grouped by the rules that make the difference, with their money.

const ALLOW: RuleVerdict = { verdict: "allow" };
const hold = (...ids: string[]): RuleVerdict => ({ verdict: "hold", rules: ids.map((id) => ({ id, reason: id })) });
const deny = (...ids: string[]): RuleVerdict => ({ verdict: "deny", rules: ids.map((id) => ({ id, code: id })) });
const FAILED: RuleVerdict = { verdict: "failed", message: "the rule set cannot be loaded" };

let sequence = 0;
function recorded(live: RuleVerdict, cents: number, currency = "USD", consequence: "auto" | "approval" = "auto") {
  sequence += 1;
  const facts = structuredClone(CASE_BASE);
  facts.call.amount_cents = cents;
  facts.order.currency = currency;
  return {
    decision: {
      callId: `call_${sequence}`,
      at: `2026-12-0${sequence % 9}T10:00:00.000Z`,
      facts,
      consequence,
      live,
      shadow: null,
      shadowId: null,
    } satisfies RecordedDecision,
  };
}

describe("a replay's difference report", () => {
  it("the numbers' consequence under a rule set's verdict: a hold or a deny wins, a failure fails, allow keeps the numbers", () => {
    expect(decidedBy("auto", ALLOW)).toBe("allow");
    expect(decidedBy("approval", ALLOW)).toBe("hold");
    expect(decidedBy("auto", hold("a"))).toBe("hold");
    expect(decidedBy("approval", deny("a"))).toBe("deny");
    expect(decidedBy("auto", FAILED)).toBe("fail");
  });

  it("lists each call decided differently, groups it under the rules that make the difference, and adds their money", () => {
    const calls = [
      recorded(ALLOW, 8000), // the candidate holds it: new-hold
      recorded(ALLOW, 2500, "EUR"), // new-hold again, in another currency
      recorded(ALLOW, 1000), // both new rules deny it
      recorded(hold("old-hold"), 4000), // the candidate no longer holds it
      recorded(ALLOW, 3000, "USD", "approval"), // held by the numbers either way: no difference
      recorded(FAILED, 500), // the live set failed; the candidate allows it
      recorded(ALLOW, 700), // unchanged
    ];
    const verdicts = new Map<string, RuleVerdict>([
      [calls[0].decision.callId, hold("new-hold")],
      [calls[1].decision.callId, hold("new-hold")],
      [calls[2].decision.callId, deny("new-deny", "new-hold")],
      [calls[3].decision.callId, ALLOW],
      [calls[4].decision.callId, hold("new-hold")],
      [calls[5].decision.callId, ALLOW],
      [calls[6].decision.callId, ALLOW],
    ]);
    const report = differences(
      calls.map((call) => call.decision),
      (decision) => verdicts.get(decision.callId)!,
    );
    expect(report.decisions).toBe(7);
    expect(report.differences.map(({ callId, was, would, rules }) => [callId, was, would, rules])).toEqual([
      [calls[0].decision.callId, "allow", "hold", ["new-hold"]],
      [calls[1].decision.callId, "allow", "hold", ["new-hold"]],
      [calls[2].decision.callId, "allow", "deny", ["new-deny", "new-hold"]],
      [calls[3].decision.callId, "hold", "allow", ["old-hold (dropped)"]],
      [calls[5].decision.callId, "fail", "allow", []],
    ]);
    // Most calls first, then by name.
    expect(report.byRule).toEqual([
      { rule: "new-hold", calls: 3, cents: { USD: 9000, EUR: 2500 } },
      { rule: "(the numbers)", calls: 1, cents: { USD: 500 } },
      { rule: "new-deny", calls: 1, cents: { USD: 1000 } },
      { rule: "old-hold (dropped)", calls: 1, cents: { USD: 4000 } },
    ]);
    expect(reportText({ ...report, more: true }, "recorded in the last 7 days")).toEqual([
      "5 calls of the 7 recorded in the last 7 days would be decided differently.",
      "  older decisions remain beyond the 7 read: read further with a larger limit",
      "  new-hold: 3 calls, 90.00 USD + 25.00 EUR",
      "  (the numbers): 1 call, 5.00 USD",
      "  new-deny: 1 call, 10.00 USD",
      "  old-hold (dropped): 1 call, 40.00 USD",
      ...report.differences.map(
        (difference) =>
          `  ${difference.at} ${difference.callId} issue_refund ${(difference.amountCents / 100).toFixed(2)} ${difference.currency}: ${difference.was} -> ${difference.would} (${difference.rules.join(", ") || "the numbers"})`,
      ),
    ]);
  });

  it("two pages of decisions merge into the report one read would give", () => {
    const calls = [recorded(ALLOW, 100), recorded(ALLOW, 200, "EUR"), recorded(ALLOW, 300), recorded(ALLOW, 400)];
    const verdict = (decision: RecordedDecision) =>
      decision.facts.call.amount_cents < 300 ? hold("small") : deny("big");
    const whole = differences(
      calls.map((call) => call.decision),
      verdict,
    );
    const merged = mergeReports(
      differences(
        calls.slice(0, 3).map((call) => call.decision),
        verdict,
      ),
      differences(
        calls.slice(3).map((call) => call.decision),
        verdict,
      ),
    );
    expect(merged).toEqual(whole);
    expect(merged.byRule).toEqual([
      { rule: "big", calls: 2, cents: { USD: 700 } },
      { rule: "small", calls: 2, cents: { USD: 100, EUR: 200 } },
    ]);
    expect(reportText(differences([], verdict), "seen")).toEqual([
      "0 calls of the 0 seen would be decided differently.",
    ]);
  });

  it("a group whose calls moved no money reads so", () => {
    expect(moneyOf({})).toBe("no money");
    expect(moneyOf({ USD: 0 })).toBe("0.00 USD");
  });
});
