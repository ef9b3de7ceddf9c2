import "server-only";
import { db } from "./db";
import type { Outcome } from "./gateway/outcome";
import { expireIfDue } from "./approvals/expiry";
import { isWellFormedId } from "./security/input";

/** A call's current outcome, only for the agent whose conversation made it. A lapsed approval is closed on read. */
export async function findAgentToolCall(agent: { userId: string; tenantId: string }, id: string): Promise<{ id: string; outcome: Outcome } | null> {
  if (!isWellFormedId(id)) return null;
  const where = { id, tenantId: agent.tenantId, conversation: { agentId: agent.userId } };
  const select = { id: true, outcome: true, approval: { select: { id: true, status: true, expiresAt: true } } } as const;
  let call = await db.toolCall.findFirst({ where, select });
  if (!call) return null;
  if (call.approval?.status === "pending" && call.approval.expiresAt <= new Date()) {
    await expireIfDue(call.approval.id);
    call = await db.toolCall.findFirst({ where, select });
    if (!call) return null;
  }
  return { id: call.id, outcome: call.outcome as unknown as Outcome };
}
