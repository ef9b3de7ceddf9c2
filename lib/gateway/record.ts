import type { Tx } from "../db";
import type { Prisma } from "../generated/prisma/client";
import type { Outcome } from "./outcome";

export const UNKNOWN_TOOL = "(unknown)";

export interface DecisionRow {
  tenantId: string;
  conversationId: string | null;
  toolCallId: string | null;
  toolName: string;
  orderId: string | null;
  outcome: Pick<Outcome, "kind" | "stage" | "code">;
  actorId?: string | null;
  replayed?: boolean;
  latencyMs: number;
}

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
}

/** Stage 13, and the only writer of the decision log: names, ids and codes, never model text or values. */
export async function appendDecision(client: Tx, row: DecisionRow): Promise<void> {
  await client.decisionLog.create({
    data: {
      tenantId: row.tenantId,
      conversationId: row.conversationId,
      toolCallId: row.toolCallId,
      toolName: row.toolName,
      orderId: row.orderId,
      kind: row.outcome.kind,
      stage: row.outcome.stage,
      code: row.outcome.code,
      actorId: row.actorId ?? null,
      replayed: row.replayed ?? false,
      latencyMs: Math.max(0, Math.round(row.latencyMs)),
    },
    select: { id: true },
  });
}

export async function recordCall(client: Tx, call: CallRecord): Promise<void> {
  await client.toolCall.create({
    data: {
      id: call.id,
      tenantId: call.tenantId,
      conversationId: call.conversationId,
      toolName: call.toolName,
      callKey: call.callKey,
      argsCanonical: call.argsCanonical,
      argsHash: call.argsHash,
      orderId: call.orderId,
      approvalId: call.approvalId,
      kind: call.outcome.kind,
      stage: call.outcome.stage,
      code: call.outcome.code,
      outcome: toJson(call.outcome),
    },
    select: { id: true },
  });
  await appendDecision(client, {
    tenantId: call.tenantId,
    conversationId: call.conversationId,
    toolCallId: call.id,
    toolName: call.toolName,
    orderId: call.orderId,
    outcome: call.outcome,
    latencyMs: call.latencyMs,
  });
  await notifyConversation(client, call.conversationId);
}

export const CALLS_CHANNEL = "toolgate_calls";

/** Tells live views that a conversation's calls changed; PostgreSQL delivers it only if the transaction commits. */
export async function notifyConversation(client: Tx, conversationId: string): Promise<void> {
  await client.$executeRaw`SELECT pg_notify(${CALLS_CHANNEL}, ${conversationId})`;
}

/** A call's outcome changes after the fact only through a decision (approve, deny, expire). */
export async function updateCallOutcome(client: Tx, where: Prisma.ToolCallWhereInput, next: Outcome): Promise<number> {
  const updated = await client.toolCall.updateMany({
    where,
    data: { kind: next.kind, stage: next.stage, code: next.code, outcome: toJson(next), updatedAt: new Date() },
  });
  return updated.count;
}

export function toJson(outcome: Outcome): Prisma.InputJsonValue {
  return JSON.parse(JSON.stringify(outcome)) as Prisma.InputJsonValue;
}
