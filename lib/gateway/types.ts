import type { OrderFacts } from "../tools/types";
import type { AgentPermissions } from "../tools/scopes";
import type { Outcome } from "../outcome";

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
  /** The duplicate-intent guard looks this many hours back (stage 10). */
  duplicateWindowHours: number;
  /** The tenant's rule set in force and the one in shadow (docs/decisions/019); absent or null: none. */
  liveRuleSetId?: string | null;
  shadowRuleSetId?: string | null;
}

/** A bucket as the call's count left it. */
export interface RateCount {
  key: string;
  count: number;
  retryAfter: number;
}

/** One row of the decision log, as stage 13 writes it. */
export interface DecisionRow {
  tenantId: string;
  actorId?: string | null;
  detail?: Record<string, unknown>;
  conversationId: string | null;
  toolCallId: string | null;
  toolName: string;
  orderId: string | null;
  outcome: Pick<Outcome, "kind" | "stage" | "code">;
  replayed?: boolean;
  latencyMs: number;
}

/** A call's own row: its outcome, and the call key it binds when that outcome is final. */
export interface CallRecord {
  id: string;
  tenantId: string;
  conversationId: string;
  toolName: string;
  /** Only outcomes that are final for this key bind it; a transient one leaves the key free for a retry. */
  callKey: string | null;
  argsCanonical: string | null;
  argsHash: string | null;
  orderId: string | null;
  approvalId: string | null;
  outcome: Outcome;
  latencyMs: number;
  /** What the decision log keeps beside the code: the duplicate-intent guard's verdict, when it looked. */
  detail?: Record<string, unknown>;
}

/**
 * An outcome decided after the fact for the call `callId` and every call waiting on `approvalId`; `decision` adds
 * their decision-log rows (who decided, how long it took, what was approved), null adds none.
 */
export interface LaterOutcome {
  callId: string | null;
  approvalId: string | null;
  outcome: Outcome;
  decision: { actorId: string | null; latencyMs: number; detail?: Record<string, unknown> } | null;
}

/**
 * The order a proposal's body named (`orderHintOf`), read with the key lookup before the stages ran: its facts when it
 * is the conversation's customer's in its tenant, null when not. A read of that order needs no statement of its own.
 */
export interface HintedOrder {
  orderId: string;
  facts: OrderFacts | null;
}
