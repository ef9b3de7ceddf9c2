import { policyToJson, type Expr, type PolicyJson } from "@cedar-policy/cedar-wasm/nodejs";
import type { Rule } from "../validate";

// The engine's cost grows with the number of policies it visits (about 2 µs each in WebAssembly, a condition that
// is plainly `false` included), and most calls trip no rule. So each tool's rules are also folded into one
// screening policy: forbid when (rule 1's scope and conditions) || (rule 2's) || … A call the screen allows, with
// no evaluation error, is allowed by every rule; anything else (it forbids, or a condition fails to evaluate) goes
// to the full set, which names the rules and reports errors exactly as before. Cedar evaluates `&&` and `||` left
// to right and stops early, so a disjunct errs only where its own rule would have. A rule whose numbers JavaScript
// cannot hold exactly (beyond 2^53) is not folded: its tool is evaluated by the full set alone.

type Scope = PolicyJson["principal"];
type Uid = { __entity: { type: string; id: string } } | { type: string; id: string };

/** An entity as a value in an expression: without the `__entity` wrapper it would read as a record. */
const entityValue = (uid: Uid): Expr => ({ Value: "__entity" in uid ? uid : { __entity: uid } });

/** A principal or resource scope as the expression it stands for; null for "any". */
function scopeExpr(variable: "principal" | "resource", scope: Scope): Expr | null {
  const left: Expr = { Var: variable };
  if (scope.op === "All") return null;
  if (scope.op === "is") {
    if (!scope.in) return { is: { left, entity_type: scope.entity_type } } as Expr;
    if (!("entity" in scope.in)) throw new Error("rules have no template slots");
    return { is: { left, entity_type: scope.entity_type, in: entityValue(scope.in.entity) } } as Expr;
  }
  if (!("entity" in scope)) throw new Error("rules have no template slots");
  return { [scope.op]: { left, right: entityValue(scope.entity) } } as Expr;
}

/** A balanced tree of `op` over `parts`, so fifty rules nest six deep, not fifty. */
function fold(op: "&&" | "||", parts: Expr[]): Expr {
  if (parts.length === 1) return parts[0];
  const middle = Math.ceil(parts.length / 2);
  return { [op]: { left: fold(op, parts.slice(0, middle)), right: fold(op, parts.slice(middle)) } } as Expr;
}

/** Whether every number in a parsed rule survived the trip through JavaScript unchanged. */
const exact = (value: unknown): boolean =>
  typeof value === "number"
    ? Number.isSafeInteger(value)
    : typeof value !== "object" || value === null || Object.values(value).every(exact);

/**
 * What must hold for one rule to forbid a call of a tool it applies to (its action scope is matched already);
 * null when the rule cannot be folded exactly.
 */
function firesWhen(rule: Rule): Expr | null {
  const parsed = policyToJson(rule.text);
  if (parsed.type === "failure" || !exact(parsed.json)) return null;
  const { principal, resource, conditions } = parsed.json;
  const parts = [
    scopeExpr("principal", principal),
    scopeExpr("resource", resource),
    ...conditions.map((clause): Expr => (clause.kind === "when" ? clause.body : { "!": { arg: clause.body } })),
  ].filter((part): part is Expr => part !== null);
  return parts.length > 0 ? fold("&&", parts) : { Value: true };
}

/** One `forbid` that fires wherever any of `rules` (all applying to one tool) would; null when one cannot be folded. */
export function screeningPolicy(rules: readonly Rule[]): PolicyJson | null {
  const disjuncts = rules.map(firesWhen);
  if (disjuncts.some((disjunct) => disjunct === null)) return null;
  return {
    effect: "forbid",
    principal: { op: "All" },
    action: { op: "All" },
    resource: { op: "All" },
    conditions: [{ kind: "when", body: fold("||", disjuncts as Expr[]) }],
  };
}
