import { policySetTextToParts, policyToJson, type EntityJson, type EntityUid } from "@cedar-policy/cedar-wasm/nodejs";
import { ruleArgs, type RuleFacts } from "../schema";

export interface RuleRequest {
  principal: EntityUid;
  action: EntityUid;
  resource: EntityUid;
  context: Record<string, string | number | Record<string, string | number | boolean>>;
  entities: EntityJson[];
}

/** Every attribute and context field a rule can read, by name (the names of `RULES_SCHEMA`). */
const FACT_NAMES = [
  "refunds_today",
  "role",
  "age_days",
  "exposure_cents",
  "fraud_watch",
  "refunds_7d",
  "refunded_cents_7d",
  "customer",
  "status",
  "currency",
  "total_cents",
  "refunded_cents",
  "effect",
  "amount_cents",
  "conversation_writes",
  "conversation_spent_cents",
  "hour",
  "weekday",
  "args",
] as const;

/**
 * The facts a set of rules can read: every attribute they access, as Cedar parses them; the engine then parses only
 * these (each attribute it parses costs every call, most calls tripping no rule).
 */
export function factsRead(texts: readonly string[]): ReadonlySet<string> {
  const accessed = new Set(texts.flatMap(attributesAccessed));
  return new Set(FACT_NAMES.filter((name) => accessed.has(name)));
}

/**
 * Every attribute name a rule set's text accesses (`.name`, `["name"]` or `has name`), read from Cedar's own parse,
 * so no spelling (an escape, a comment, spaces) hides one. A text Cedar cannot parse, or one that uses `context`
 * other than by an attribute (compared whole), counts as accessing every fact.
 */
export function attributesAccessed(text: string): string[] {
  const parts = policySetTextToParts(text);
  if (parts.type === "failure") return [...FACT_NAMES];
  const names: string[] = [];
  let whole = false;
  const walk = (value: unknown, underAccess: boolean): void => {
    if (Array.isArray(value)) return value.forEach((inner) => walk(inner, false));
    if (typeof value !== "object" || value === null) return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === "Var" && inner === "context" && !underAccess) whole = true;
      const access = (key === "." || key === "has") && typeof inner === "object" && inner !== null;
      if (access && typeof (inner as { attr?: unknown }).attr === "string")
        names.push((inner as { attr: string }).attr);
      if (access) {
        const { left, ...rest } = inner as { left?: unknown };
        walk(left, true);
        walk(rest, false);
      } else walk(inner, false);
    }
  };
  for (const policy of parts.policies) {
    const parsed = policyToJson(policy);
    if (parsed.type === "failure") return [...FACT_NAMES];
    walk(parsed.json.conditions, false);
  }
  return whole ? [...FACT_NAMES] : names;
}

/** The fields of `record` whose names `reads` holds (all of them without `reads`). */
function only<T extends Record<string, unknown>>(record: T, reads: ReadonlySet<string> | undefined): Partial<T> {
  if (!reads) return record;
  return Object.fromEntries(Object.entries(record).filter(([name]) => reads.has(name))) as Partial<T>;
}

/**
 * The facts as the Cedar request and entities the schema describes; with `reads`, only the attributes named there
 * (`factsRead` of the rules the request is evaluated against).
 */
export function requestFor(facts: RuleFacts, reads?: ReadonlySet<string>): RuleRequest {
  const customer = { type: "Customer", id: facts.customer.id };
  const { id: agentId, ...agent } = facts.agent;
  const { id: customerId, ...customerAttrs } = facts.customer;
  const { id: orderId, ...order } = facts.order;
  return {
    principal: { type: "Agent", id: agentId },
    action: { type: "Action", id: facts.tool },
    resource: { type: "Order", id: orderId },
    context: only({ effect: facts.effect, ...facts.call, args: facts.args }, reads) as RuleRequest["context"],
    entities: [
      { uid: { type: "Agent", id: agentId }, attrs: only(agent, reads), parents: [] },
      { uid: { type: "Customer", id: customerId }, attrs: only(customerAttrs, reads), parents: [] },
      {
        uid: { type: "Order", id: orderId },
        attrs: only({ customer: { __entity: customer }, ...order }, reads),
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
