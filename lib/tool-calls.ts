import "server-only";
import { db } from "./db";
import { outcome, type Outcome } from "./gateway/outcome";
import { listening, subscribe, watchConversation } from "./live";
import { logError } from "./log";
import { isWellFormedId } from "./security/input";

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

const select = {
  id: true,
  conversationId: true,
  outcome: true,
  approval: { select: { id: true, status: true, expiresAt: true } },
} as const;

/**
 * A call's current outcome, only for the agent whose conversation made it. A call whose approval lapsed reads as
 * `approval.expired`, the outcome the expiry job records for it; reading writes nothing.
 */
export async function findAgentToolCall(agent: AgentRef, id: string): Promise<FoundCall | null> {
  if (!isWellFormedId(id)) return null;
  const call = await db.toolCall.findFirst({
    where: { id, tenantId: agent.tenantId, conversation: { agentId: agent.userId } },
    select,
  });
  if (!call) return null;
  const lapsesAt = call.approval?.status === "pending" ? call.approval.expiresAt : null;
  const lapsed = lapsesAt !== null && lapsesAt <= new Date();
  return {
    id: call.id,
    conversationId: call.conversationId,
    outcome: lapsed ? outcome("approval.expired") : (call.outcome as unknown as Outcome),
    lapsesAt,
  };
}

/** Decided: no longer waiting for a supervisor, nor for the outside system an approved effect went to. */
const decided = (o: Outcome) => o.kind !== "pending_approval" && o.code !== "refund.outcome-unknown";

// Only when this process has no LISTEN connection: then a waiter looks this often instead of being told.
const FALLBACK_POLL_MS = 2000;

/**
 * `findAgentToolCall`, but an undecided call is answered as soon as it is decided, or after `waitSeconds` with its
 * outcome then. The waiter is told by the conversation's NOTIFY (it holds a watch, so writers notify it), not by
 * polling the database; one read per notice of its own conversation.
 */
export async function waitForAgentToolCall(
  agent: AgentRef,
  id: string,
  waitSeconds: number,
  signal?: AbortSignal,
): Promise<FoundCall | null> {
  const first = await findAgentToolCall(agent, id);
  if (!first || decided(first.outcome) || waitSeconds <= 0) return first;

  const deadline = Date.now() + waitSeconds * 1000;
  let wake = () => {};
  let changed = true;
  const unsubscribe = subscribe(first.conversationId, () => {
    changed = true;
    wake();
  });
  const watch = await watchConversation(first.conversationId, waitSeconds * 1000 + 15_000);
  const pushed = await listening();
  try {
    for (;;) {
      if (changed) {
        changed = false;
        const current = await findAgentToolCall(agent, id);
        if (!current || decided(current.outcome)) return current;
      }
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) break;
      // A notice that arrived during the read above found no sleeper to wake: look again instead of sleeping.
      if (changed) continue;
      // A lapsing approval sends no notice: the waiter looks again the moment it lapses.
      const untilLapse = first.lapsesAt ? Math.max(0, first.lapsesAt.getTime() - Date.now()) + 5 : Infinity;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, untilLapse, pushed ? Infinity : FALLBACK_POLL_MS));
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        wake = done;
        signal?.addEventListener("abort", done);
      });
      wake = () => {};
      if (!pushed || (first.lapsesAt && Date.now() >= first.lapsesAt.getTime())) changed = true;
    }
    return await findAgentToolCall(agent, id);
  } finally {
    unsubscribe();
    await watch.end().catch((error) => logError("live.watch-failed", error, { conversationId: first.conversationId }));
  }
}
