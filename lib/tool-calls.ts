import "server-only";
import { db } from "./db";
import type { Outcome } from "./gateway/outcome";
import { expireIfDue } from "./approvals/expiry";
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
}

const select = { id: true, conversationId: true, outcome: true, approval: { select: { id: true, status: true, expiresAt: true } } } as const;

/** A call's current outcome, only for the agent whose conversation made it. A lapsed approval is closed on read. */
export async function findAgentToolCall(agent: AgentRef, id: string): Promise<FoundCall | null> {
  if (!isWellFormedId(id)) return null;
  const where = { id, tenantId: agent.tenantId, conversation: { agentId: agent.userId } };
  let call = await db.toolCall.findFirst({ where, select });
  if (!call) return null;
  if (call.approval?.status === "pending" && call.approval.expiresAt <= new Date()) {
    await expireIfDue(call.approval.id);
    call = await db.toolCall.findFirst({ where, select });
    if (!call) return null;
  }
  return { id: call.id, conversationId: call.conversationId, outcome: call.outcome as unknown as Outcome };
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
export async function waitForAgentToolCall(agent: AgentRef, id: string, waitSeconds: number, signal?: AbortSignal): Promise<FoundCall | null> {
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
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pushed ? left : Math.min(left, FALLBACK_POLL_MS));
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        wake = done;
        signal?.addEventListener("abort", done);
      });
      wake = () => {};
      if (!pushed) changed = true;
    }
    // The last look also closes a request that lapsed while it was waited on.
    return await findAgentToolCall(agent, id);
  } finally {
    unsubscribe();
    await watch.end().catch((error) => logError("live.watch-failed", error, { conversationId: first.conversationId }));
  }
}
