import type { EntityJson, EntityUid } from "@cedar-policy/cedar-wasm/nodejs";
import { ruleArgs, type RuleFacts } from "./schema";

export interface RuleRequest {
  principal: EntityUid;
  action: EntityUid;
  resource: EntityUid;
  context: Record<string, string | number | Record<string, string | number | boolean>>;
  entities: EntityJson[];
}

/** The facts as the Cedar request and entities the schema describes. */
export function requestFor(facts: RuleFacts): RuleRequest {
  const customer = { type: "Customer", id: facts.customer.id };
  return {
    principal: { type: "Agent", id: facts.agent.id },
    action: { type: "Action", id: facts.tool },
    resource: { type: "Order", id: facts.order.id },
    context: { effect: facts.effect, ...facts.call, args: facts.args },
    entities: [
      {
        uid: { type: "Agent", id: facts.agent.id },
        attrs: {
          refunds_today: facts.agent.refunds_today,
          role: facts.agent.role,
          age_days: facts.agent.age_days,
          exposure_cents: facts.agent.exposure_cents,
        },
        parents: [],
      },
      {
        uid: customer,
        attrs: {
          fraud_watch: facts.customer.fraud_watch,
          age_days: facts.customer.age_days,
          refunds_7d: facts.customer.refunds_7d,
          refunded_cents_7d: facts.customer.refunded_cents_7d,
        },
        parents: [],
      },
      {
        uid: { type: "Order", id: facts.order.id },
        attrs: {
          customer: { __entity: customer },
          status: facts.order.status,
          currency: facts.order.currency,
          total_cents: facts.order.total_cents,
          refunded_cents: facts.order.refunded_cents,
          age_days: facts.order.age_days,
        },
        parents: [],
      },
    ],
  };
}

/** Facts for a trial evaluation at validation: every attribute present, the smallest values. */
export const SAMPLE_FACTS: RuleFacts = {
  tool: "issue_refund",
  effect: "irreversible",
  agent: { id: "sample", refunds_today: 0, role: "AGENT", age_days: 0, exposure_cents: 0 },
  customer: { id: "sample", fraud_watch: false, age_days: 0, refunds_7d: 0, refunded_cents_7d: 0 },
  order: { id: "sample", status: "delivered", currency: "USD", total_cents: 0, refunded_cents: 0, age_days: 0 },
  call: { amount_cents: 0, conversation_writes: 0, conversation_spent_cents: 0, hour: 0, weekday: 1 },
  args: ruleArgs("issue_refund", {}),
};
