import { describe, expect, it } from "vitest";
import { lacksNewerFacts, ruleArgs, withMissingFacts, type RecordedFacts } from "@/lib/policy-rules/schema";

// The facts a rule reads of a call's arguments, and of a decision recorded before the facts of issue 38 existed.

const OLDER: RecordedFacts = {
  tool: "issue_refund",
  effect: "irreversible",
  agent: { id: "agt_1", refunds_today: 2 },
  customer: { id: "cus_1", fraud_watch: false, age_days: 40 },
  order: { id: "ord_1", status: "delivered", currency: "USD", total_cents: 9000, refunded_cents: 0, age_days: 3 },
  call: { amount_cents: 1500, conversation_writes: 1, conversation_spent_cents: 0 },
};

describe("the facts of a call", () => {
  it("an argument of the wrong type reads as its type's empty value, a flag included", () => {
    expect(ruleArgs("issue_refund", { order_id: true, amount_cents: true, currency: "EUR", reason: false })).toEqual({
      order_id: "",
      amount_cents: 0,
      currency: "EUR",
      reason: "",
    });
  });

  it("a decision recorded before issue 38 reads with every newer fact empty; one recorded after keeps its own", () => {
    expect(lacksNewerFacts(OLDER)).toBe(true);
    expect(withMissingFacts(OLDER)).toEqual({
      ...OLDER,
      agent: { id: "agt_1", refunds_today: 2, role: "", age_days: 0, exposure_cents: 0 },
      customer: { id: "cus_1", fraud_watch: false, age_days: 40, refunds_7d: 0, refunded_cents_7d: 0 },
      call: { amount_cents: 1500, conversation_writes: 1, conversation_spent_cents: 0, hour: 0, weekday: 1 },
      args: { order_id: "", amount_cents: 0, currency: "", reason: "" },
    });
    const newer = withMissingFacts({
      ...OLDER,
      agent: { ...OLDER.agent, role: "SUPERVISOR" },
      args: { order_id: "ord_1", amount_cents: 1500 },
    });
    expect(lacksNewerFacts(newer)).toBe(false);
    expect(newer.agent.role).toBe("SUPERVISOR");
    expect(newer.args).toEqual({ order_id: "ord_1", amount_cents: 1500, currency: "", reason: "" });
  });
});
