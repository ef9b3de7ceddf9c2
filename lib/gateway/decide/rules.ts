import type { Db } from "../../db";
import { outcome, type Outcome } from "../../outcome";
import {
  compileRules,
  evaluateRules,
  knownRules,
  type RuleSet,
  type RuleVerdict,
} from "../../policy-rules/engine/evaluate";
import { recordedFacts, ruleArgs, type RuleFacts } from "../../policy-rules/schema";
import type { OrderFacts, ToolDefinition } from "../../tools/types";
import { findRuleFacts, findRuleSetText, type RuleFactsRow } from "./sql";
import type { ConversationFacts, TenantPolicy } from "../types";

/** The tenant's rules on one call: the facts they read, the live verdict (enforced) and the shadow one (recorded). */
export interface RulesCheck {
  facts: RuleFacts;
  live: RuleVerdict;
  shadow: RuleVerdict | null;
  liveId: string | null;
  shadowId: string | null;
}

/** A rule that holds the call, as the supervisor's card lists it among the reasons. */
export interface RuleHold {
  rule: "policy_rule";
  id: string;
  reason: string;
}

const ALLOW: RuleVerdict = { verdict: "allow" };

/** Whether the tenant's rules look at this call: a write always keeps its facts, a read only when there are rules. */
export function readsRuleFacts(tool: ToolDefinition, policy: TenantPolicy): boolean {
  return tool.effect !== "read" || Boolean(policy.liveRuleSetId) || Boolean(policy.shadowRuleSetId);
}

/**
 * Stage 10's rules (docs/decisions/019), after the numbers: the facts the rules read (`row`, loaded with the order
 * by stage 7 when `readsRuleFacts`), then the live rule set and the shadow one. A write always keeps its facts, so a
 * rule set can be replayed over it later; a read keeps them only when the tenant has rules. Null when nothing was
 * looked at.
 */
export async function checkRules(
  client: Db,
  tool: ToolDefinition,
  conversation: ConversationFacts,
  policy: TenantPolicy,
  order: OrderFacts,
  impactCents: number,
  row: RuleFactsRow | null,
  args: Record<string, unknown>,
): Promise<RulesCheck | null> {
  const live = policy.liveRuleSetId ?? null;
  const shadow = policy.shadowRuleSetId ?? null;
  if (!readsRuleFacts(tool, policy)) return null;
  if (!row) throw new Error(`the order ${order.id} the call loaded has no facts for its rules`);
  const facts: RuleFacts = {
    tool: tool.name,
    effect: tool.effect,
    agent: {
      id: conversation.agentId,
      refunds_today: row.agentRefundsToday,
      role: row.agentRole ?? "",
      age_days: row.agentAgeDays ?? 0,
      exposure_cents: Math.max(0, row.agentExposureCents),
    },
    customer: {
      id: order.customerId,
      fraud_watch: row.fraudWatch,
      age_days: row.customerAgeDays,
      refunds_7d: row.customerRefunds7d,
      refunded_cents_7d: row.customerRefundedCents7d,
    },
    order: {
      id: order.id,
      status: order.status,
      currency: order.currency,
      total_cents: order.totalCents,
      refunded_cents: order.refundedCents,
      age_days: row.orderAgeDays,
    },
    call: {
      amount_cents: impactCents,
      conversation_writes: conversation.writesMade,
      conversation_spent_cents: conversation.irreversibleCents,
      hour: row.localHour,
      weekday: row.localWeekday,
    },
    args: ruleArgs(tool.name, args),
  };
  return {
    facts,
    liveId: live,
    shadowId: shadow,
    live: live ? await verdictOf(client, conversation.tenantId, live, facts) : ALLOW,
    shadow: shadow ? await verdictOf(client, conversation.tenantId, shadow, facts) : null,
  };
}

/** What other calls change while this one waits for the exposure reservation's locks: the rules that read it. */
const MOVING_FACTS = /refunds_today|fraud_watch|exposure_cents|refunds_7d|refunded_cents_7d/;

/**
 * Whether the live rules read a fact that another call can change while this one waits for the reservation's locks
 * (the agent's refunds today, the customer's flag). Decided on the rules' text, so a mention in a comment only costs
 * a statement; true for a set this process has not compiled.
 */
export function readsMovingFacts(check: RulesCheck): boolean {
  if (!check.liveId) return false;
  const ruleSet = knownRules(check.liveId);
  return !ruleSet || ruleSet.rules.some((rule) => MOVING_FACTS.test(rule.text));
}

/**
 * The rules again on their facts read anew, for a call that reserved its exposure and would run without a person
 * (docs/decisions/023): the reservation's locks are held, so this read sees every refund of the agent committed
 * before, and the customer's flag as it is after the wait.
 */
export async function recheckRules(
  client: Db,
  tool: ToolDefinition,
  conversation: ConversationFacts,
  policy: TenantPolicy,
  order: OrderFacts,
  impactCents: number,
  args: Record<string, unknown>,
): Promise<RulesCheck | null> {
  const row = await findRuleFacts(client, {
    orderId: order.id,
    tenantId: conversation.tenantId,
    agentId: conversation.agentId,
    countRefunds: tool.effect === "irreversible",
  });
  // The reservation already counts this call in the agent's exposure: the rules read it as before this call.
  const before = row && { ...row, agentExposureCents: row.agentExposureCents - impactCents };
  return checkRules(client, tool, conversation, policy, order, impactCents, before, args);
}

/** A published version, compiled once per process (a known one reads no text); null when it no longer compiles. */
export async function publishedRules(client: Db, tenantId: string, id: string): Promise<RuleSet | null> {
  const known = knownRules(id);
  if (known) return known;
  const text = await findRuleSetText(client, tenantId, id);
  return text === undefined ? null : compileRules(id, text);
}

/** A published version's verdict on the facts; one that cannot be loaded fails closed. */
async function verdictOf(client: Db, tenantId: string, id: string, facts: RuleFacts): Promise<RuleVerdict> {
  const ruleSet = await publishedRules(client, tenantId, id);
  if (!ruleSet) return { verdict: "failed", message: `the rule set ${id} cannot be loaded` };
  return evaluateRules(ruleSet, facts);
}

/**
 * The outcome that stops a call when the live verdict denies it or cannot decide (fail closed); null otherwise.
 * `reason`: words for the model, when a re-check at approval stops it.
 */
export function verdictStop(live: RuleVerdict | undefined, reason?: string): Outcome | null {
  const extra = reason ? { reason } : {};
  if (live?.verdict === "deny") return outcome("policy.rule-denied", extra);
  if (live?.verdict === "failed") return outcome("policy.rules-failed", extra);
  return null;
}

/** The outcome that stops the call when the live rules deny it or cannot decide (fail closed); null otherwise. */
export const rulesStop = (check: RulesCheck | null): Outcome | null => verdictStop(check?.live);

/** The live rules that hold the call for a person. */
export function ruleHolds(check: RulesCheck | null): RuleHold[] {
  if (check?.live.verdict !== "hold") return [];
  return check.live.rules.map(({ id, reason }) => ({ rule: "policy_rule", id, reason }));
}

/** What the decision log keeps of the rules: the facts, both verdicts, which sets gave them, the numbers' consequence. */
export function rulesDetail(check: RulesCheck, consequence: "auto" | "approval"): Record<string, unknown> {
  const { facts, live, shadow, liveId, shadowId } = check;
  return { rules: { facts: recordedFacts(facts), consequence, live, shadow, liveId, shadowId } };
}
