import { describe, expect, it } from "vitest";
import {
  classifyAdminChange,
  loosenedRules,
  LOOSENS,
  splitPolicyChange,
  UNREADABLE_RULES,
  type PolicyNumbers,
} from "@/lib/admin/changes/loosening/loosening";
import { POLICY_FIELDS, type PolicyField } from "@/lib/admin/policy/fields";

// Every field and every admin action through the one classifier (docs/decisions/015).

const BOUND = 10_000;
const TABLE: [PolicyField, number, number, ReturnType<typeof classifyAdminChange>][] = [
  ["autoLimitCents", 5000, 8000, "loosening"],
  ["autoLimitCents", 5000, 10_000_000, "needs-second-admin"],
  ["autoLimitCents", 5000, 4000, "tightening"],
  ["sessionCapCents", 10_000, 10_001, "needs-second-admin"],
  ["sessionCapCents", 10_000, 9000, "tightening"],
  ["maxAutoWrites", 3, 4, "needs-second-admin"],
  ["maxAutoWrites", 3, 2, "tightening"],
  ["approvalTtlSeconds", 900, 901, "needs-second-admin"],
  ["approvalTtlSeconds", 900, 600, "tightening"],
  ["agentDailyCeilingCents", 5000, 10_000, "loosening"],
  ["agentDailyCeilingCents", 25_000, 30_000, "needs-second-admin"],
  ["agentDailyCeilingCents", 25_000, 20_000, "tightening"],
  ["tenantDailyCeilingCents", 100_000, 100_001, "needs-second-admin"],
  ["tenantDailyCeilingCents", 100_000, 1, "tightening"],
  ["rateOpenPerMin", 30, 31, "needs-second-admin"],
  ["rateOpenPerMin", 30, 29, "tightening"],
  ["stepUpAboveCents", 10_000, 20_000, "needs-second-admin"],
  ["stepUpAboveCents", 5000, 10_000, "loosening"],
  ["stepUpAboveCents", 10_000, 0, "tightening"],
  ["twoPersonAboveCents", 100_000, 100_001, "needs-second-admin"],
  ["twoPersonAboveCents", 100_000, 50_000, "tightening"],
  ["expiryWarningSeconds", 300, 0, "tightening"],
  ["expiryWarningSeconds", 300, 600, "tightening"],
  ["secondAdminAboveCents", 10_000, 10_001, "needs-second-admin"],
  ["secondAdminAboveCents", 10_000, 0, "tightening"],
  ["changeDelaySeconds", 86_400, 3600, "needs-second-admin"],
  ["changeDelaySeconds", 86_400, 172_800, "tightening"],
  ["duplicateWindowHours", 24, 12, "needs-second-admin"],
  ["duplicateWindowHours", 24, 48, "tightening"],
  ["oauthRefreshIdleDays", 30, 31, "needs-second-admin"],
  ["oauthRefreshIdleDays", 30, 7, "tightening"],
  ["oauthRefreshMaxDays", 90, 91, "needs-second-admin"],
  ["oauthRefreshMaxDays", 90, 60, "tightening"],
  ["autoLimitCents", 5000, 5000, "unchanged"],
];

describe("the two-admin rule: classifying admin changes", () => {
  it.each(TABLE)("%s %i → %i is %s", (field, before, after, expected) => {
    expect(classifyAdminChange({ kind: "policy", field, before, after, bound: BOUND })).toBe(expected);
  });

  it("covers every policy field, each loosening way in the table", () => {
    expect(Object.keys(LOOSENS).sort()).toEqual(POLICY_FIELDS.map((spec) => spec.name).sort());
    for (const spec of POLICY_FIELDS) expect(TABLE.some(([field]) => field === spec.name)).toBe(true);
  });

  it("classifies every other admin action", () => {
    expect(classifyAdminChange({ kind: "refunds", canRefund: true })).toBe("needs-second-admin");
    expect(classifyAdminChange({ kind: "refunds", canRefund: false })).toBe("tightening");
    expect(classifyAdminChange({ kind: "api-key.create", agentCanRefund: true })).toBe("needs-second-admin");
    expect(classifyAdminChange({ kind: "api-key.create", agentCanRefund: false })).toBe("loosening");
    expect(classifyAdminChange({ kind: "webhook.set" })).toBe("needs-second-admin");
    expect(classifyAdminChange({ kind: "self-registration", enabled: true })).toBe("needs-second-admin");
    expect(classifyAdminChange({ kind: "self-registration", enabled: false })).toBe("tightening");
    expect(classifyAdminChange({ kind: "api-key.revoke" })).toBe("tightening");
    expect(classifyAdminChange({ kind: "sessions.end" })).toBe("tightening");
    expect(classifyAdminChange({ kind: "webhook.remove" })).toBe("tightening");
    expect(classifyAdminChange({ kind: "chat.set" })).toBe("needs-second-admin");
    expect(classifyAdminChange({ kind: "chat.remove" })).toBe("tightening");
    expect(classifyAdminChange({ kind: "rules", status: "live", loosened: ["fraud-watch"] })).toBe(
      "needs-second-admin",
    );
    expect(classifyAdminChange({ kind: "rules", status: "live", loosened: [] })).toBe("tightening");
    expect(classifyAdminChange({ kind: "rules", status: "shadow", loosened: ["fraud-watch"] })).toBe("tightening");
  });

  it("a live rule set loosens when it drops or rewrites a rule in force, never when it only adds", () => {
    const a = { id: "a", text: "forbid (principal, action, resource);" };
    const b = { id: "b", text: "forbid (principal, action, resource) when { context.amount_cents > 1 };" };
    expect(loosenedRules([a], [a, b])).toEqual([]);
    expect(loosenedRules([a, b], [a])).toEqual(["b"]);
    expect(loosenedRules([a, b], [a, { ...b, text: b.text.replace("> 1", "> 100") }])).toEqual(["b"]);
    expect(loosenedRules(null, [a, b])).toEqual([UNREADABLE_RULES]);
  });

  it("splits a save: tightening and within-bound loosening now, the whole save waits when any number needs a second admin", () => {
    const before = Object.fromEntries(POLICY_FIELDS.map((spec) => [spec.name, spec.min + 100])) as PolicyNumbers;
    before.secondAdminAboveCents = BOUND;
    const after = { ...before, autoLimitCents: 50, sessionCapCents: BOUND, maxAutoWrites: before.maxAutoWrites + 1 };
    expect(splitPolicyChange(before, after)).toEqual({
      now: { ...before, autoLimitCents: 50, sessionCapCents: BOUND },
      waiting: after,
    });
    const tightened = { ...before, autoLimitCents: 0 };
    expect(splitPolicyChange(before, tightened)).toEqual({ now: tightened, waiting: null });
  });
});
