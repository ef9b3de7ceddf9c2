import type { AuthenticatedAgent } from "../auth/keys/api-keys";
import { keyAuthenticates } from "../auth/keys/sql";
import { db } from "../db";
import { isFinal, outcomeAsRead, type Outcome } from "../outcome";
import { waitForConversation } from "../live";
import { isWellFormedId } from "../security/input";
import { findAgentToolCallRow } from "./sql";

export const MAX_WAIT_SECONDS = 60;

interface AgentRef {
  userId: string;
  tenantId: string;
}

interface FoundCall {
  id: string;
  conversationId: string;
  outcome: Outcome;
  /** When the call's pending approval lapses, while it is still pending. */
  lapsesAt: Date | null;
}

/**
 * A call's current outcome, only for the agent whose conversation made it. A call whose approval lapsed reads as
 * `approval.expired`, the outcome the expiry job records for it; reading writes nothing.
 */
export async function findAgentToolCall(agent: AgentRef, id: string): Promise<FoundCall | null> {
  if (!isWellFormedId(id)) return null;
  const call = await findAgentToolCallRow(db, agent, id);
  if (!call) return null;
  const lapsesAt = call.approval?.status === "pending" ? call.approval.expiresAt : null;
  return {
    id: call.id,
    conversationId: call.conversationId,
    outcome: outcomeAsRead(call.outcome, lapsesAt !== null && lapsesAt <= new Date()),
    lapsesAt,
  };
}

/**
 * `findAgentToolCall`, but an undecided call is answered as soon as it is decided, or after `waitSeconds` with its
 * outcome then (lib/live/index.ts waits: told by the conversation's NOTIFY, not by polling the database).
 */
export async function waitForAgentToolCall(
  agent: AgentRef,
  id: string,
  waitSeconds: number,
  signal?: AbortSignal,
): Promise<FoundCall | null> {
  const first = await findAgentToolCall(agent, id);
  if (!first || isFinal(first.outcome) || waitSeconds <= 0) return first;
  return waitForConversation(
    first.conversationId,
    waitSeconds,
    async () => {
      const current = await findAgentToolCall(agent, id);
      return { done: !current || isFinal(current.outcome), value: current, wakeAt: current?.lapsesAt };
    },
    signal,
  );
}

/**
 * What GET /api/v1/tool-calls/{id} answers: `waitForAgentToolCall`, then, for a read that asked to wait, the key asked
 * again, as the wait outlives the request's authentication: a key revoked (or an agent deactivated) meanwhile gets
 * `revoked`, nothing of the call.
 */
export async function readAgentToolCall(
  agent: AuthenticatedAgent,
  id: string,
  waitSeconds: number,
  signal?: AbortSignal,
): Promise<FoundCall | "revoked" | null> {
  const call = await waitForAgentToolCall(agent, id, waitSeconds, signal);
  if (waitSeconds > 0 && !(await keyAuthenticates(db, agent.apiKeyId))) return "revoked";
  return call;
}
