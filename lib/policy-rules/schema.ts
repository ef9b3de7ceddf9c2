import { z } from "zod";
import { TOOL_NAMES } from "../tools/registry";

/**
 * The facts a rule reads, as stage 5 resolved them for one call: the snapshot every decision keeps (bounded: a
 * fixed set of numbers, flags and short strings), so a rule set can be replayed over recorded decisions.
 */
export interface RuleFacts {
  tool: string;
  effect: string;
  agent: { id: string; refunds_today: number };
  customer: { id: string; fraud_watch: boolean; age_days: number };
  order: {
    id: string;
    status: string;
    currency: string;
    total_cents: number;
    refunded_cents: number;
    age_days: number;
  };
  /** The call's money impact and the conversation's running totals before it. */
  call: { amount_cents: number; conversation_writes: number; conversation_spent_cents: number };
}

const Count = z.int().min(0);

/** The facts as data (a test case's, or a snapshot read back): the same shape as `RuleFacts`, checked. */
export const RuleFactsSchema = z.strictObject({
  tool: z.enum(TOOL_NAMES as [string, ...string[]]),
  effect: z.enum(["read", "reversible", "irreversible"]),
  agent: z.strictObject({ id: z.string().min(1), refunds_today: Count }),
  customer: z.strictObject({ id: z.string().min(1), fraud_watch: z.boolean(), age_days: Count }),
  order: z.strictObject({
    id: z.string().min(1),
    status: z.string(),
    currency: z.string(),
    total_cents: Count,
    refunded_cents: Count,
    age_days: Count,
  }),
  call: z.strictObject({ amount_cents: Count, conversation_writes: Count, conversation_spent_cents: Count }),
}) satisfies z.ZodType<RuleFacts>;

/** Every tool that acts on an order is an action a rule can name: `action == Action::"issue_refund"`. */
export const RULE_ACTIONS: readonly string[] = TOOL_NAMES;

/** The Cedar schema every rule set is validated against (strict mode): the entities stage 5 resolves. */
export const RULES_SCHEMA = `
entity Agent = { refunds_today: Long };
entity Customer = { fraud_watch: Bool, age_days: Long };
entity Order = {
  customer: Customer,
  status: String,
  currency: String,
  total_cents: Long,
  refunded_cents: Long,
  age_days: Long,
};
type CallContext = {
  effect: String,
  amount_cents: Long,
  conversation_writes: Long,
  conversation_spent_cents: Long,
};
action ${RULE_ACTIONS.map((name) => JSON.stringify(name)).join(", ")} appliesTo {
  principal: Agent,
  resource: Order,
  context: CallContext,
};
`;

/** What each attribute means, for the rules page. */
export const FACT_WORDS: readonly [string, string][] = [
  [
    "principal.refunds_today",
    "refunds the agent's calls have made since midnight UTC, counted up to 100 (refund tools only)",
  ],
  ["resource.customer.fraud_watch", "the customer is on fraud watch"],
  ["resource.customer.age_days", "whole days since the customer was created"],
  ["resource.age_days", "whole days since the order was placed"],
  ["resource.status / .currency / .total_cents / .refunded_cents", "the order as the call read it"],
  ["context.amount_cents", "the call's money impact in cents (0 for a call that moves no money)"],
  ["context.effect", '"read", "reversible" or "irreversible"'],
  ["context.conversation_writes / .conversation_spent_cents", "the conversation's writes and money before this call"],
];
