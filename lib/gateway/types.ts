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
}

export interface TenantPolicy {
  autoLimitCents: number;
  sessionCapCents: number;
  maxAutoWrites: number;
  approvalTtlSeconds: number;
  rateConversationPerMin: number;
  rateKeyPerMin: number;
}
