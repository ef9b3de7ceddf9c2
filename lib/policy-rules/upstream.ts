import {
  preparsePolicySet,
  statefulIsAuthorized,
  validate,
  type CedarValueJson,
  type SchemaJson,
} from "@cedar-policy/cedar-wasm/nodejs";
import { verdictOf, type RuleVerdict } from "./engine/evaluate";
import { isUpstreamRule, policiesOf, type Rule } from "./validate";

// Rules for the tools of upstream MCP servers (docs/decisions/026, amendment): the rules of a tenant's set that name
// only `<server>__<tool>` actions. Their schema is not the orders' (./schema.ts): it is built from the tenant's
// reviewed definitions, one action per tool, principal `Agent`, resource `UpstreamServer`, and a context
// `{ server, definition_hash, args }` whose `args` are the call's arguments typed from the pinned input schema.
// Only simple top-level properties are typed: `string` → String, `integer` → Long, `boolean` → Boolean; any other
// property (numbers with fractions, arrays, objects, unions) is left out of `args`, so a rule cannot read it and a
// rule that tries fails validation. A property the input schema requires is required in `args`; others are
// optional (`context.args has path`).

/** An upstream tool as its rules see it: the namespaced name and the reviewed definition's input schema and hash. */
export interface UpstreamAction {
  name: string;
  inputSchema: Record<string, unknown>;
  hash: string;
}

/** One upstream call as its rules read it. */
export interface UpstreamFacts {
  agentId: string;
  tool: UpstreamAction;
  server: string;
  args: Record<string, unknown>;
}

type CedarType = "String" | "Long" | "Boolean";
const TYPES: Record<string, CedarType> = { string: "String", integer: "Long", boolean: "Boolean" };

/** The top-level properties of an input schema that a rule can read, with their Cedar type and whether required. */
function typedProperties(inputSchema: Record<string, unknown>): Map<string, { type: CedarType; required: boolean }> {
  const properties = inputSchema.properties;
  const required = Array.isArray(inputSchema.required) ? inputSchema.required : [];
  const typed = new Map<string, { type: CedarType; required: boolean }>();
  if (typeof properties !== "object" || properties === null) return typed;
  for (const [name, property] of Object.entries(properties)) {
    const declared = (property as { type?: unknown } | null)?.type;
    const type = typeof declared === "string" ? TYPES[declared] : undefined;
    if (type) typed.set(name, { type, required: required.includes(name) });
  }
  return typed;
}

/** The call's arguments a rule can read, as Cedar values: only the typed properties, each of its declared type. */
export function typedArguments(
  inputSchema: Record<string, unknown>,
  args: Record<string, unknown>,
): Record<string, CedarValueJson> {
  const typed: Record<string, CedarValueJson> = {};
  for (const [name, { type }] of typedProperties(inputSchema)) {
    const value = Object.hasOwn(args, name) ? args[name] : undefined;
    if (type === "String" && typeof value === "string") typed[name] = value;
    if (type === "Long" && Number.isSafeInteger(value)) typed[name] = value as number;
    if (type === "Boolean" && typeof value === "boolean") typed[name] = value;
  }
  return typed;
}

/** The Cedar schema of the tools `actions`, as JSON (no text to escape a property's name into). */
export function upstreamSchema(actions: readonly UpstreamAction[]): SchemaJson<string> {
  const action = (tool: UpstreamAction) => ({
    appliesTo: {
      principalTypes: ["Agent"],
      resourceTypes: ["UpstreamServer"],
      context: {
        type: "Record" as const,
        attributes: {
          server: { type: "String" as const },
          definition_hash: { type: "String" as const },
          args: {
            type: "Record" as const,
            attributes: Object.fromEntries(
              [...typedProperties(tool.inputSchema)].map(([name, { type, required }]) => [name, { type, required }]),
            ),
          },
        },
      },
    },
  });
  return {
    "": {
      entityTypes: { Agent: {}, UpstreamServer: {} },
      actions: Object.fromEntries(actions.map((tool) => [tool.name, action(tool)])),
    },
  };
}

/** The rules of a set that apply to one upstream tool. */
export const upstreamRulesFor = (rules: readonly Rule[], tool: string): Rule[] =>
  rules.filter((rule) => isUpstreamRule(rule) && rule.actions.includes(tool));

/** Every upstream tool the rules name: the schema they are validated against holds each. */
export const namedUpstreamTools = (rules: readonly Rule[]): string[] => [
  ...new Set(rules.flatMap((rule) => rule.actions)),
];

export type UpstreamRuleSet = { ok: true; id: string; rules: Rule[] } | { ok: false; message: string };

const compiled = new Map<string, UpstreamRuleSet>();

/**
 * `rules` (all naming one upstream tool) validated in strict mode against the schema of `actions` (every tool they
 * name, as reviewed now) and pre-parsed once under `key`, which names the rule set's version and every definition's
 * hash: a re-reviewed definition compiles anew. A rule that does not validate (it reads an argument the tool does
 * not have, or names a tool not reviewed) makes the set fail, and every call of the tool fails closed.
 */
export function compileUpstreamRules(key: string, rules: Rule[], actions: UpstreamAction[]): UpstreamRuleSet {
  const known = compiled.get(key);
  if (known) return known;
  const staticPolicies = policiesOf(rules);
  const validated = validate({
    schema: upstreamSchema(actions),
    policies: { staticPolicies },
    validationSettings: { mode: "strict" },
  });
  const ruleSet: UpstreamRuleSet =
    validated.type === "failure"
      ? { ok: false, message: validated.errors.map((error) => error.message).join("; ") }
      : validated.validationErrors.length > 0
        ? {
            ok: false,
            message: validated.validationErrors
              .map(({ policyId, error }) => `rule "${policyId}": ${error.message}`)
              .join("; "),
          }
        : preparsePolicySet(key, { staticPolicies }).type === "success"
          ? { ok: true, id: key, rules }
          : { ok: false, message: "the rule engine could not load the rules" };
  compiled.set(key, ruleSet);
  return ruleSet;
}

/** What the rules say about one upstream call: allow, hold, deny, or failed (fail closed). */
export function evaluateUpstreamRules(ruleSet: UpstreamRuleSet, facts: UpstreamFacts): RuleVerdict {
  if (!ruleSet.ok) return { verdict: "failed", message: ruleSet.message };
  const request = {
    principal: { type: "Agent", id: facts.agentId },
    action: { type: "Action", id: facts.tool.name },
    resource: { type: "UpstreamServer", id: facts.server },
    context: {
      server: facts.server,
      definition_hash: facts.tool.hash,
      args: typedArguments(facts.tool.inputSchema, facts.args),
    },
    entities: [],
    preparsedPolicySetId: ruleSet.id,
  };
  try {
    return verdictOf(ruleSet.rules, statefulIsAuthorized(request));
  } catch (error) {
    return verdictOf(ruleSet.rules, {
      type: "thrown",
      message: error instanceof Error ? error.message : String(error),
    });
  }
}
