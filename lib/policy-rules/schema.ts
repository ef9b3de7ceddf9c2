import { z } from "zod";
import { findTool, TOOL_NAMES } from "../tools/registry";

/** An argument of the tool as a rule reads it: strings, whole numbers and flags (typed from the tool's schema). */
export type ArgValue = string | number | boolean;

/**
 * The facts a rule reads, as stage 5 resolved them for one call: the snapshot every decision keeps (bounded: a
 * fixed set of numbers, flags and short strings, and the tool's own arguments), so a rule set can be replayed over
 * recorded decisions. Decisions recorded before a fact existed are read with it filled in (`withMissingFacts`).
 */
export interface RuleFacts {
  tool: string;
  effect: string;
  agent: { id: string; refunds_today: number; role: string; age_days: number; exposure_cents: number };
  customer: { id: string; fraud_watch: boolean; age_days: number; refunds_7d: number; refunded_cents_7d: number };
  order: {
    id: string;
    status: string;
    currency: string;
    total_cents: number;
    refunded_cents: number;
    age_days: number;
  };
  /**
   * The call's money impact and the conversation's running totals before it; the time of day (0–23) and the day of
   * the week (1 Monday … 7 Sunday) in the tenant's time zone.
   */
  call: {
    amount_cents: number;
    conversation_writes: number;
    conversation_spent_cents: number;
    hour: number;
    weekday: number;
  };
  /** The tool's arguments, each typed from its schema (see `ARG_TYPES`). */
  args: Record<string, ArgValue>;
}

/** Every tool that acts on an order is an action a rule can name: `action == Action::"issue_refund"`. */
export const RULE_ACTIONS: readonly string[] = TOOL_NAMES;

type CedarType = "String" | "Long" | "Bool";

/** One tool's arguments as Cedar types, from the JSON Schema of its zod schema; other shapes are not offered. */
function argTypesOf(tool: string): Record<string, CedarType> {
  const schema = z.toJSONSchema(findTool(tool)!.schema) as { properties?: Record<string, { type?: string }> };
  const types: Record<string, CedarType> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (property.type === "string") types[name] = "String";
    if (property.type === "integer") types[name] = "Long";
    if (property.type === "boolean") types[name] = "Bool";
  }
  return types;
}

/** Each tool's arguments a rule can read (`context.args.amount_cents`), typed from the tool's schema. */
export const ARG_TYPES: Readonly<Record<string, Record<string, CedarType>>> = Object.fromEntries(
  RULE_ACTIONS.map((tool) => [tool, argTypesOf(tool)]),
);

/**
 * Each tool's arguments the decision log may keep in a rules snapshot: numbers, booleans, a choice among fixed values
 * and ids. Free text (an address, a reason) is personal data the log never holds; replay reads it as empty.
 */
const RECORDED_ARGS: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(
  RULE_ACTIONS.map((tool) => {
    const schema = z.toJSONSchema(findTool(tool)!.schema) as {
      properties?: Record<string, { type?: string; enum?: unknown[] }>;
    };
    const kept = Object.entries(schema.properties ?? {}).filter(
      ([name, property]) => property.type !== "string" || property.enum !== undefined || name.endsWith("_id"),
    );
    return [tool, new Set(kept.map(([name]) => name))];
  }),
);

/** The facts as the decision log keeps them: the tool's free-text arguments left out. */
export function recordedFacts(facts: RuleFacts): RuleFacts {
  const kept = RECORDED_ARGS[facts.tool];
  return { ...facts, args: Object.fromEntries(Object.entries(facts.args).filter(([name]) => kept?.has(name))) };
}

/** A tool's arguments as a rule reads them: only the typed ones, each of its type; a missing one reads as empty. */
export function ruleArgs(tool: string, args: Record<string, unknown>): Record<string, ArgValue> {
  const empty = { String: "", Long: 0, Bool: false } as const;
  return Object.fromEntries(
    Object.entries(ARG_TYPES[tool] ?? {}).map(([name, type]) => {
      const value = args[name];
      const fits =
        (type === "String" && typeof value === "string") ||
        (type === "Long" && Number.isSafeInteger(value)) ||
        (type === "Bool" && typeof value === "boolean");
      return [name, fits ? (value as ArgValue) : empty[type]];
    }),
  );
}

const Count = z.int().min(0);

/** The facts as data (a test case's, or a snapshot read back): the same shape as `RuleFacts`, checked. */
export const RuleFactsSchema = z.strictObject({
  tool: z.enum(TOOL_NAMES as [string, ...string[]]),
  effect: z.enum(["read", "reversible", "irreversible"]),
  agent: z.strictObject({
    id: z.string().min(1),
    refunds_today: Count,
    role: z.string(),
    age_days: Count,
    exposure_cents: Count,
  }),
  customer: z.strictObject({
    id: z.string().min(1),
    fraud_watch: z.boolean(),
    age_days: Count,
    refunds_7d: Count,
    refunded_cents_7d: Count,
  }),
  order: z.strictObject({
    id: z.string().min(1),
    status: z.string(),
    currency: z.string(),
    total_cents: Count,
    refunded_cents: Count,
    age_days: Count,
  }),
  call: z.strictObject({
    amount_cents: Count,
    conversation_writes: Count,
    conversation_spent_cents: Count,
    hour: z.int().min(0).max(23),
    weekday: z.int().min(1).max(7),
  }),
  args: z.record(z.string(), z.union([z.string(), z.int(), z.boolean()])),
}) satisfies z.ZodType<RuleFacts>;

/** Facts as a decision-log row kept them: one recorded before issue 38 lacks the facts added then. */
export type RecordedFacts = Omit<RuleFacts, "agent" | "customer" | "call" | "args"> & {
  agent: Pick<RuleFacts["agent"], "id" | "refunds_today"> & Partial<RuleFacts["agent"]>;
  customer: Pick<RuleFacts["customer"], "id" | "fraud_watch" | "age_days"> & Partial<RuleFacts["customer"]>;
  call: Pick<RuleFacts["call"], "amount_cents" | "conversation_writes" | "conversation_spent_cents"> &
    Partial<RuleFacts["call"]>;
  args?: Record<string, ArgValue>;
};

/**
 * A recorded decision's facts with every fact added since it was recorded filled in: a number reads 0, a string
 * "", a flag false, the time of day 0 and the day 1 (Monday), and the tool's arguments as their empty values, so
 * a rule set replays over every recorded decision (docs/decisions/019, amendment of issue 38).
 */
export function withMissingFacts(recorded: RecordedFacts): RuleFacts {
  return {
    ...recorded,
    agent: { role: "", age_days: 0, exposure_cents: 0, ...recorded.agent },
    customer: { refunds_7d: 0, refunded_cents_7d: 0, ...recorded.customer },
    call: { hour: 0, weekday: 1, ...recorded.call },
    args: { ...ruleArgs(recorded.tool, {}), ...recorded.args },
  };
}

/** Whether a recorded decision's facts predate the facts of issue 38 (its replay reads them as `withMissingFacts`). */
export const lacksNewerFacts = (recorded: RecordedFacts) => recorded.args === undefined;

const cedarRecord = (types: Record<string, string>) =>
  `{ ${Object.entries(types)
    .map(([name, type]) => `${name}: ${type}`)
    .join(", ")} }`;

/** Each entity type's attributes, as rules read them (`principal.age_days`, `resource.customer.fraud_watch`). */
export const ENTITY_ATTRIBUTES: Readonly<Record<string, Record<string, string>>> = {
  Agent: { refunds_today: "Long", role: "String", age_days: "Long", exposure_cents: "Long" },
  Customer: { fraud_watch: "Bool", age_days: "Long", refunds_7d: "Long", refunded_cents_7d: "Long" },
  Order: {
    customer: "Customer",
    status: "String",
    currency: "String",
    total_cents: "Long",
    refunded_cents: "Long",
    age_days: "Long",
  },
};

/** What `context` holds for every tool, beside the tool's own `args`. */
export const CONTEXT_ATTRIBUTES: Readonly<Record<string, CedarType>> = {
  effect: "String",
  amount_cents: "Long",
  conversation_writes: "Long",
  conversation_spent_cents: "Long",
  hour: "Long",
  weekday: "Long",
};

/** The Cedar schema every rule set is validated against (strict mode): the entities stage 5 resolves. */
export const RULES_SCHEMA = `
${Object.entries(ENTITY_ATTRIBUTES)
  .map(([type, attributes]) => `entity ${type} = ${cedarRecord(attributes)};`)
  .join("\n")}
${RULE_ACTIONS.map(
  (tool) => `action ${JSON.stringify(tool)} appliesTo {
  principal: Agent,
  resource: Order,
  context: ${cedarRecord({ ...CONTEXT_ATTRIBUTES, args: cedarRecord(ARG_TYPES[tool]) })},
};`,
).join("\n")}
`;

/** What each attribute means, for the rules page. */
export const FACT_WORDS: readonly [string, string][] = [
  [
    "principal.refunds_today",
    "refunds the agent's calls have made since midnight UTC, counted up to 100 (refund tools only)",
  ],
  ["principal.role", 'the agent\'s role in toolgate ("AGENT", "SUPERVISOR" or "ADMIN")'],
  ["principal.age_days", "whole days since the agent's account was created"],
  [
    "principal.exposure_cents",
    "money the agent's calls moved without a person in the last 24 hours, as the agent's daily ceiling counts it",
  ],
  ["resource.customer.fraud_watch", "the customer is on fraud watch"],
  ["resource.customer.age_days", "whole days since the customer was created"],
  [
    "resource.customer.refunds_7d / .refunded_cents_7d",
    "the customer's refunds (any order, any status) in the last 7 days, counted up to 100, and their sum in cents",
  ],
  ["resource.age_days", "whole days since the order was placed"],
  ["resource.status / .currency / .total_cents / .refunded_cents", "the order as the call read it"],
  ["context.amount_cents", "the call's money impact in cents (0 for a call that moves no money)"],
  ["context.effect", '"read", "reversible" or "irreversible"'],
  ["context.conversation_writes / .conversation_spent_cents", "the conversation's writes and money before this call"],
  [
    "context.hour / .weekday",
    "the time of day (0–23) and the day of the week (1 Monday … 7 Sunday) in the tenant's time zone",
  ],
  [
    "context.args.…",
    `the tool's arguments: ${RULE_ACTIONS.map((tool) => `${tool} (${Object.keys(ARG_TYPES[tool]).join(", ")})`).join("; ")}`,
  ],
];
