import { db, type Db } from "../db";
import type { ConversationFacts, HintedOrder, TenantPolicy } from "../gateway";
import { isWellFormedId } from "../security/input";
import { permissionsFrom } from "../tools/scopes";
import { columnsOf, splitRow } from "../db/sql";
import { findConversationRow, type ConversationRow } from "./sql";

export interface FoundConversation {
  conversation: ConversationFacts;
  policy: TenantPolicy;
  hintedOrder?: HintedOrder;
}

/** The columns of a `TenantPolicy`, read with the conversation. */
const POLICY_COLUMNS = columnsOf<TenantPolicy>({
  autoLimitCents: true,
  sessionCapCents: true,
  maxAutoWrites: true,
  approvalTtlSeconds: true,
  rateConversationPerMin: true,
  rateKeyPerMin: true,
  duplicateWindowHours: true,
  liveRuleSetId: true,
  shadowRuleSetId: true,
});

export function toFound(row: ConversationRow): FoundConversation {
  const [policy, rest] = splitRow(row, POLICY_COLUMNS);
  const { agentRole, agentCanRefund, agentActive, ...facts } = rest;
  return {
    conversation: {
      ...facts,
      agent: permissionsFrom({ role: agentRole, canRefund: agentCanRefund, active: agentActive }),
    },
    policy,
  };
}

/** The conversation with its tenant's policy, only if it belongs to this agent: anyone else gets null. */
export async function findAgentConversation(
  agent: { userId: string; tenantId: string },
  conversationId: string,
): Promise<FoundConversation | null> {
  return loadConversation(db, conversationId, agent);
}

/**
 * One statement, rather than an ORM query per relation (docs/BENCHMARKS.md). With an agent, only that agent's
 * conversation in that agent's tenant is found; without, any (for host-side work).
 */
export async function loadConversation(
  client: Db,
  conversationId: string,
  agent?: { userId: string; tenantId: string },
): Promise<FoundConversation | null> {
  if (!isWellFormedId(conversationId)) return null;
  const agentId = agent?.userId ?? null;
  const tenantId = agent?.tenantId ?? null;
  const row = await findConversationRow(client, conversationId, agentId, tenantId);
  return row ? toFound(row) : null;
}
