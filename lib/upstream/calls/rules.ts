import { canonicalJson, sha256Hex } from "../../canonical";
import type { Db } from "../../db";
import type { Outcome } from "../../outcome";
import { publishedRules, verdictStop, type TenantPolicy } from "../../gateway";
import type { RuleVerdict } from "../../policy-rules/engine/evaluate";
import {
  compileUpstreamRules,
  evaluateUpstreamRules,
  namedUpstreamTools,
  upstreamRulesFor,
  type UpstreamAction,
} from "../../policy-rules/upstream";
import { namespaced, type PinnedDefinition } from "../servers/definition";
import { findTenantTools } from "../sql";

/** The live rules' word on one upstream call, and the version that gave it; null when no live rule names the tool. */
export interface UpstreamRulesCheck {
  live: RuleVerdict;
  liveId: string;
}

/**
 * The tenant's live rules that name this upstream tool (docs/decisions/026, amendment), evaluated on the call's
 * arguments as the pinned input schema types them. The rules are validated against the schema of every tool they
 * name, as reviewed now; a set that does not load or validate, or a rule that fails to evaluate, is `failed`.
 */
export async function checkUpstreamRules(
  client: Db,
  call: {
    tenantId: string;
    agentId: string;
    policy: TenantPolicy;
    server: string;
    tool: string;
    definition: PinnedDefinition;
    hash: string;
    args: Record<string, unknown>;
  },
): Promise<UpstreamRulesCheck | null> {
  const liveId = call.policy.liveRuleSetId;
  if (!liveId) return null;
  const name = namespaced(call.server, call.tool);
  const ruleSet = await publishedRules(client, call.tenantId, liveId);
  if (!ruleSet) return { liveId, live: { verdict: "failed", message: `the rule set ${liveId} cannot be loaded` } };
  const rules = upstreamRulesFor(ruleSet.rules, name);
  if (rules.length === 0) return null;
  const tool = { name, inputSchema: call.definition.inputSchema, hash: call.hash };
  const named = namedUpstreamTools(rules);
  // The call's own tool is reviewed under `hash` (the caller checked); the others named are read as reviewed now.
  const others = named.length === 1 ? [] : await findTenantTools(client, call.tenantId, named);
  const actions: UpstreamAction[] = [tool];
  for (const other of others) {
    const otherName = namespaced(other.server.name, other.name);
    if (otherName === name || other.status !== "reviewed" || !other.reviewedDefinition || !other.reviewedHash) continue;
    actions.push({ name: otherName, inputSchema: other.reviewedDefinition.inputSchema, hash: other.reviewedHash });
  }
  const key = `${liveId}:upstream:${name}:${sha256Hex(canonicalJson(actions.map((action) => [action.name, action.hash])))}`;
  const compiled = compileUpstreamRules(key, rules, actions);
  return {
    liveId,
    live: evaluateUpstreamRules(compiled, { agentId: call.agentId, tool, server: call.server, args: call.args }),
  };
}

/** The outcome that stops the call when the live rules deny it or cannot decide (fail closed); null otherwise. */
export const rulesStop = (rules: UpstreamRulesCheck | null, reason?: string): Outcome | null =>
  verdictStop(rules?.live, reason);
