import type { AgentPermissions } from "../tools/scopes";

/** The conversation as the host opened it: identity, customer and scopes never come from model output. */
export interface ConversationFacts {
  id: string;
  tenantId: string;
  agentId: string;
  customerId: string;
  orderId: string | null;
  tools: string[];
  scopes: string[];
  writesMade: number;
  irreversibleCents: number;
  /**
   * The agent's permission as read by this call, with the conversation (and again under the conversation's
   * lock for a write); null when the agent no longer exists. Stage 10 decides from it.
   */
  agent: AgentPermissions | null;
}

export interface TenantPolicy {
  autoLimitCents: number;
  sessionCapCents: number;
  maxAutoWrites: number;
  approvalTtlSeconds: number;
  rateConversationPerMin: number;
  rateKeyPerMin: number;
}
