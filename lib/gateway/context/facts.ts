import type { Db } from "../../db";
import type { EarlierEffect, OrderFacts, ToolDefinition, ToolPorts } from "../../tools/types";
import { pass, stop, type StageResult } from "../../outcome";
import { isCallKey, type StoredCall } from "./idempotency";
import { readsRuleFacts } from "../decide/rules";
import { columnsOf, splitRow } from "../../db/sql";
import { callFactsStatement, findCallFacts, type CallFactsQuery, type CallFactsRow } from "./sql";
import type { RuleFactsRow } from "../decide/sql";
import type { ConversationFacts, HintedOrder, TenantPolicy } from "../types";

/** The order a call names and, read with it, what the later stages decide from. */
export interface CallFacts {
  order: OrderFacts;
  /** The call stored under this call's key (stage 8); null for a read, a malformed key or a new key. */
  stored: (StoredCall & { argsHash: string | null }) | null;
  /** The order's earlier effects the tool declares (the duplicate-intent guard, stage 10); null when it declares none. */
  recent: EarlierEffect[] | null;
  /** What the policy rules read beside the order (stage 10); null when no rules look at this call. */
  ruleFacts: RuleFactsRow | null;
}

/** The columns of a `RuleFactsRow`, read beside the order's. */
const RULE_FACT_COLUMNS = columnsOf<RuleFactsRow>({
  fraudWatch: true,
  customerAgeDays: true,
  orderAgeDays: true,
  agentRefundsToday: true,
  agentRole: true,
  agentAgeDays: true,
  agentExposureCents: true,
  customerRefunds7d: true,
  customerRefundedCents7d: true,
  localHour: true,
  localWeekday: true,
});

/** What stage 7 reads for a call, decided before anything is read. */
export type CallFactsPlan =
  /** Nothing to read: the call stops, or a read is answered from the order the key lookup read. */
  { ready: StageResult<CallFacts> } | { query: CallFactsQuery };

/** What stage 7 needs beyond the call: the call key, the tenant's policy, the ports, the order the key lookup read. */
export interface FactsReads {
  callKey: string | null;
  policy: TenantPolicy;
  ports: ToolPorts;
  hinted?: HintedOrder;
}

/**
 * Stage 7's plan: the order, and in the same statement everything stages 8 and 10 read from the database (the call
 * key's stored call, the tool's earlier effects within the tenant's duplicate window, the rules' facts), so a call's
 * checks cost one statement; a write sends it with BEGIN, after the conversation's lock (docs/decisions/028).
 * `reads` null reads the order alone.
 */
export function planCallFacts(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  conversation: Pick<ConversationFacts, "id" | "orderId" | "tenantId" | "customerId" | "agentId">,
  reads: FactsReads | null,
): CallFactsPlan {
  const orderId = tool.orderId(args);
  if (conversation.orderId !== null && conversation.orderId !== orderId) return { ready: stop("order.not-found") };
  const callKey = reads?.callKey && tool.effect !== "read" && isCallKey(reads.callKey) ? reads.callKey : null;
  const rules = reads !== null && readsRuleFacts(tool, reads.policy);
  const recent =
    reads && tool.earlierEffects ? tool.earlierEffects.recent(reads.policy.duplicateWindowHours, reads.ports) : null;
  // A read with nothing else to read is answered from the order the key lookup read for it (decision 027).
  const hinted = reads?.hinted;
  if (tool.effect === "read" && !rules && !recent && hinted?.orderId === orderId) {
    return {
      ready: hinted.facts
        ? pass({ order: hinted.facts, stored: null, recent: null, ruleFacts: null })
        : stop("order.not-found"),
    };
  }
  return {
    query: {
      orderId,
      tenantId: conversation.tenantId,
      customerId: conversation.customerId,
      agentId: conversation.agentId,
      key: callKey ? { conversationId: conversation.id, toolName: tool.name, callKey } : null,
      recent,
      rules: rules ? { countRefunds: tool.effect === "irreversible" } : null,
    },
  };
}

/** The statements a plan sends: its facts statement (`callFactsStatement`), or none when it needs no read. */
export const callFactsStatements = (plan: CallFactsPlan) => ("query" in plan ? [callFactsStatement(plan.query)] : []);

/** Stage 7's answer from what the plan's statement read (`rows`, none when it needed no read). */
export function callFactsFrom(plan: CallFactsPlan, rows: unknown[] | undefined): StageResult<CallFacts> {
  if ("ready" in plan) return plan.ready;
  const row = rows?.[0] as CallFactsRow | undefined;
  if (!row) return stop("order.not-found");
  const { stored, recent: effects, ...rest } = row;
  const [ruleFacts, order] = splitRow(rest, RULE_FACT_COLUMNS);
  return pass({
    order,
    stored: stored && { id: stored.id, argsHash: stored.argsHash, outcome: stored.outcome as StoredCall["outcome"] },
    recent: effects && effects.map((effect) => ({ ...effect, at: new Date(effect.at) })),
    ruleFacts: plan.query.rules ? (ruleFacts as RuleFactsRow) : null,
  });
}

/** Stage 7 in a statement of its own (`planCallFacts`), for a read, a recheck and a call whose BEGIN did not carry it. */
export async function loadCallFacts(
  client: Db,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  conversation: ConversationFacts,
  reads: FactsReads | null,
): Promise<StageResult<CallFacts>> {
  const plan = planCallFacts(tool, args, conversation, reads);
  if ("ready" in plan) return plan.ready;
  const row = await findCallFacts(client, plan.query);
  return callFactsFrom(plan, row ? [row] : []);
}
