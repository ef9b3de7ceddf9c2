import {
  isAuthorized,
  policySetTextToParts,
  policyToJson,
  validate,
  type DetailedError,
  type PolicyJson,
} from "@cedar-policy/cedar-wasm/nodejs";
import { requestFor, SAMPLE_FACTS } from "./engine/entities";
import { ruleOverLimit, RULE_LIMITS, textOverLimit } from "./engine/limits";
import { ARG_TYPES, CONTEXT_ATTRIBUTES, ENTITY_ATTRIBUTES, RULE_ACTIONS, RULES_SCHEMA } from "./schema";

/** One rule of a set: it can only hold a call for a person or deny it, never allow what the code would stop. */
export interface Rule {
  id: string;
  effect: "hold" | "deny";
  /** For a hold, the reason the supervisor's card and the model read; for a deny, the rule's stable code. */
  says: string;
  /** The tools it applies to; every tool when it names none. */
  actions: string[];
  text: string;
}

export type Validated = { ok: true; rules: Rule[] } | { ok: false; errors: string[] };

/** Ids with this prefix name the code's own policies: a tenant's rule under one would replace that policy in the set. */
const RESERVED_ID_PREFIX = "toolgate-";
/** The code's own policy under every rule: Cedar denies by default, and a rule set only ever adds `forbid`s. */
export const BASE_POLICY_ID = `${RESERVED_ID_PREFIX}base`;
/** The id of the policy folding a tool's rules into one (./screen.ts). */
export const SCREEN_POLICY_ID = `${RESERVED_ID_PREFIX}screen`;
export const BASE_POLICY = "permit (principal, action, resource);";

const ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,59}$/;
const CODE_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;
const MAX_REASON = 200;
/**
 * Bidirectional embeddings, overrides and isolates: in a comment or a string they reorder how the rest of the line is
 * shown ("Trojan Source"), so a rule would read, on the rules page and in the second admin's diff, differently than
 * Cedar parses it. Right-to-left text itself (a reason in Hebrew or Arabic) needs none of them.
 */
const DIRECTION_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;

/**
 * Parses and checks a rule set: its size and nesting before the parser sees it, then each rule's form (a `forbid`
 * with `@id` and either `@hold("reason")` or `@deny("code")`), then the set against the schema, then one trial
 * evaluation. Every error is a sentence naming the line or the rule.
 */
export function validateRules(text: string): Validated {
  const overLimit = textOverLimit(text);
  if (overLimit) return { ok: false, errors: [overLimit] };
  const control = DIRECTION_CONTROL.exec(text);
  if (control) {
    const code = control[0].codePointAt(0)!.toString(16).toUpperCase();
    const line = text.slice(0, control.index).split("\n").length;
    return {
      ok: false,
      errors: [
        `line ${line}: the invisible character U+${code} changes the order the text is shown in, so the rule would read differently than it works; remove it`,
      ],
    };
  }
  const parts = policySetTextToParts(text);
  if (parts.type === "failure") return { ok: false, errors: parts.errors.map((error) => inWords(error, text)) };
  if (parts.policy_templates.length > 0)
    return { ok: false, errors: ["templates (rules with ?principal or ?resource slots) are not supported"] };
  if (parts.policies.length > RULE_LIMITS.rules) {
    return {
      ok: false,
      errors: [`the set has ${parts.policies.length} rules; at most ${RULE_LIMITS.rules} are allowed`],
    };
  }
  const errors: string[] = [];
  const rules: Rule[] = [];
  parts.policies.forEach((ruleText, index) => {
    const checked = checkRule(ruleText, index + 1);
    if (!checked.ok) errors.push(checked.error);
    else if (rules.some((rule) => rule.id === checked.rule.id))
      errors.push(`rule ${index + 1}: the id "${checked.rule.id}" is used twice`);
    else rules.push(checked.rule);
  });
  if (errors.length > 0) return { ok: false, errors };
  // A rule for upstream tools is checked against the tenant's reviewed tools when a call reads it (./upstream.ts).
  const policies = policiesOf(rules.filter((rule) => !isUpstreamRule(rule)));
  const validated = validate({
    schema: RULES_SCHEMA,
    policies: { staticPolicies: policies },
    validationSettings: { mode: "strict" },
  });
  if (validated.type === "failure") return { ok: false, errors: validated.errors.map((error) => inWords(error, text)) };
  if (validated.validationErrors.length > 0) {
    return {
      ok: false,
      // Cedar reports a rule for every tool it applies to; the same words once each.
      errors: [
        ...new Set(
          validated.validationErrors.map(
            ({ policyId, error }) => `rule "${policyId}": ${missingAttribute(error.message) ?? sentence(error)}`,
          ),
        ),
      ],
    };
  }
  const trial = isAuthorized({ ...requestFor(SAMPLE_FACTS), policies: { staticPolicies: policies } });
  if (trial.type === "failure") return { ok: false, errors: trial.errors.map((error) => inWords(error, text)) };
  const failing = trial.response.diagnostics.errors;
  if (failing.length > 0) {
    return {
      ok: false,
      errors: failing.map(({ policyId, error }) => `rule "${policyId}" fails to evaluate: ${sentence(error)}`),
    };
  }
  return { ok: true, rules };
}

/** How a rule reaches each entity type. */
const REACHED_AS: Record<string, string> = { Agent: "principal", Order: "resource", Customer: "resource.customer" };
const ATTRIBUTE_NOT_FOUND =
  /attribute `([^`]+)` (?:in context for Action::"([^"]+)"|on entity type `([^`]+)`) not found/;

/**
 * An attribute a rule reads that is not there, with what is there and the one it most likely meant (the one its
 * name is part of: `amount` → `amount_cents`); Cedar's own guess goes by spelling alone (`amount` → `hour`).
 */
function missingAttribute(message: string): string | null {
  const found = ATTRIBUTE_NOT_FOUND.exec(message);
  if (!found) return null;
  const [, path, tool, entity] = found;
  const inArgs = tool !== undefined && path.startsWith("args.");
  const name = inArgs ? path.slice("args.".length) : path;
  const where = entity ? (REACHED_AS[entity] ?? entity) : inArgs ? `context.args of ${tool}` : "context";
  const names = entity
    ? Object.keys(ENTITY_ATTRIBUTES[entity] ?? {})
    : inArgs
      ? Object.keys(ARG_TYPES[tool] ?? {})
      : [...Object.keys(CONTEXT_ATTRIBUTES), "args"];
  const meant = names.find((candidate) => candidate.includes(name.toLowerCase()));
  return `${where} has no attribute "${name}"${meant ? `: did you mean "${meant}"?` : "."} Its attributes are ${names.join(", ")}.`;
}

/** The rules with the base policy, keyed by id, as Cedar takes them. */
export function policiesOf(rules: readonly Rule[]): Record<string, string> {
  return Object.fromEntries([[BASE_POLICY_ID, BASE_POLICY], ...rules.map((rule) => [rule.id, rule.text])]);
}

function checkRule(text: string, position: number): { ok: true; rule: Rule } | { ok: false; error: string } {
  const fail = (problem: string) => ({ ok: false as const, error: `rule ${position}: ${problem}` });
  const overLimit = ruleOverLimit(text);
  if (overLimit) return fail(overLimit);
  const parsed = policyToJson(text);
  if (parsed.type === "failure") return fail(parsed.errors.map(sentence).join("; "));
  const { effect, annotations = {}, action } = parsed.json;
  const id = annotations.id;
  if (!id || !ID_PATTERN.test(id)) {
    return fail('it needs @id("…"): lower-case letters, digits and dashes, at most 60 characters');
  }
  if (id.startsWith(RESERVED_ID_PREFIX)) {
    return fail(
      `the id "${id}" is reserved: ids starting with "${RESERVED_ID_PREFIX}" are toolgate's own; choose another`,
    );
  }
  const named = (problem: string) => ({ ok: false as const, error: `rule "${id}": ${problem}` });
  if (effect !== "forbid") {
    return named(
      "only `forbid` rules are allowed: a rule can hold or deny a call, never allow one the built-in limits stop",
    );
  }
  const hold = annotations.hold;
  const deny = annotations.deny;
  if ((hold === undefined) === (deny === undefined)) {
    return named('it needs exactly one of @hold("reason shown to the supervisor and the model") or @deny("code")');
  }
  if (hold !== undefined && (hold.trim() === "" || hold.length > MAX_REASON)) {
    return named(`the @hold reason must be 1 to ${MAX_REASON} characters`);
  }
  if (deny !== undefined && !CODE_PATTERN.test(deny)) {
    return named("the @deny code must be lower-case letters, digits and dashes, at most 40");
  }
  const actions = actionsOf(action);
  const upstream = actions.filter(isUpstreamAction);
  if (upstream.length > 0 && upstream.length < actions.length) {
    return named("a rule names either built-in tools or upstream tools (server__tool), not both; split it in two");
  }
  const unknown = upstream.length > 0 ? undefined : actions.find((name) => !RULE_ACTIONS.includes(name));
  if (unknown) return named(`there is no tool "${unknown}"; the tools are ${RULE_ACTIONS.join(", ")}`);
  return {
    ok: true,
    rule: { id, effect: hold !== undefined ? "hold" : "deny", says: hold ?? deny!, actions, text },
  };
}

/** An upstream tool's name, `<server>__<tool>` (lib/upstream/servers/definition.ts): no built-in tool has the separator. */
const isUpstreamAction = (name: string) => /^[a-z][a-z0-9-]{0,29}__[A-Za-z0-9_.-]{1,64}$/.test(name);

/** A rule for upstream tools: it names only tools of upstream servers, never one built in (nor every tool). */
export const isUpstreamRule = (rule: Rule) => rule.actions.length > 0 && rule.actions.every(isUpstreamAction);

function actionsOf(action: PolicyJson["action"]): string[] {
  if (action.op === "All") return [];
  if (action.op === "==") return "entity" in action ? [idOf(action.entity)] : [];
  return "entity" in action ? [idOf(action.entity)] : action.entities.map(idOf);
}

const idOf = (uid: { __entity: { id: string } } | { id: string }) => ("__entity" in uid ? uid.__entity.id : uid.id);

/** Cedar's error as one sentence, with the line it points at when it points at one. */
function inWords(error: DetailedError, text: string): string {
  const at = error.sourceLocations?.[0];
  const line = at ? `line ${text.slice(0, at.start).split("\n").length}: ` : "";
  return `${line}${sentence(error)}`;
}

const sentence = (error: DetailedError) => (error.help ? `${error.message} (${error.help})` : error.message);
