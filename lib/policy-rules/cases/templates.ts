import type { RuleCase } from "./cases";

/** A rule an admin starts from and adapts: its text and the test cases that say what it holds and lets through. */
export interface RuleTemplate {
  id: string;
  title: string;
  text: string;
  cases: RuleCase[];
}

export const RULE_TEMPLATES: readonly RuleTemplate[] = [
  {
    id: "customer-refunded-often",
    title: "A customer refunded often",
    text: `@id("customer-refunded-often")
@hold("This customer was refunded twice or more in the last 7 days")
forbid (principal, action == Action::"issue_refund", resource)
when { resource.customer.refunds_7d >= 2 };`,
    cases: [
      {
        name: "a customer's third refund of the week waits",
        facts: { customer: { age_days: 400, refunds_7d: 2 } },
        expect: { verdict: "hold", rule: "customer-refunded-often" },
      },
      {
        name: "a customer's second refund of the week does not",
        facts: { customer: { age_days: 400, refunds_7d: 1 } },
        expect: { verdict: "allow" },
      },
    ],
  },
  {
    id: "large-refund-out-of-hours",
    title: "A large amount outside office hours",
    text: `@id("large-refund-out-of-hours")
@hold("Refunds over 200.00 USD outside office hours (9:00 to 17:00, Monday to Friday) wait for a supervisor")
forbid (principal, action == Action::"issue_refund", resource)
when { context.args.amount_cents > 20000 && (context.hour < 9 || context.hour >= 17 || context.weekday >= 6) };`,
    cases: [
      {
        name: "a large refund on a Saturday afternoon waits",
        facts: { call: { hour: 14, weekday: 6 }, args: { amount_cents: 25000 } },
        expect: { verdict: "hold", rule: "large-refund-out-of-hours" },
      },
      {
        name: "a large refund at 22:00 on a Tuesday waits",
        facts: { call: { hour: 22, weekday: 2 }, args: { amount_cents: 25000 } },
        expect: { verdict: "hold", rule: "large-refund-out-of-hours" },
      },
      {
        name: "a large refund on a Tuesday at 10:00 does not",
        facts: { call: { hour: 10, weekday: 2 }, args: { amount_cents: 25000 } },
        expect: { verdict: "allow" },
      },
      {
        name: "a small refund at night does not",
        facts: { call: { hour: 2, weekday: 2 }, args: { amount_cents: 2000 } },
        expect: { verdict: "allow" },
      },
    ],
  },
  {
    id: "new-agent-refunds",
    title: "An agent new this week",
    text: `@id("new-agent-refunds")
@hold("Refunds by an agent new this week wait for a supervisor")
forbid (principal, action == Action::"issue_refund", resource)
when { principal.age_days < 7 };`,
    cases: [
      {
        name: "a refund by an agent of three days waits",
        facts: { agent: { age_days: 3 } },
        expect: { verdict: "hold", rule: "new-agent-refunds" },
      },
      {
        name: "a refund by an agent of a month does not",
        facts: { agent: { age_days: 30 } },
        expect: { verdict: "allow" },
      },
    ],
  },
];
