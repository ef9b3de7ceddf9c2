import type { Db } from "../db";
import type { OrderFacts, ToolDefinition, ToolPorts } from "../tools/types";
import { outcome, type Outcome } from "../outcome";
import { moveOrderWithBudgets, type ExposureReservation } from "./sql";
import type { ConversationFacts } from "./types";

export interface ExecutableCall {
  tool: ToolDefinition;
  args: Record<string, unknown>;
  order: OrderFacts;
  conversation: ConversationFacts;
  impactCents: number;
  callId: string;
  /** The reservation against the exposure ceilings of an irreversible effect executed without approval. */
  exposure?: ExposureReservation | null;
}

/**
 * Stage 12. For a write, the caller's transaction holds the conversation lock; the order changes only if it
 * is still at the version every check saw, and the effect and the budgets land in the same transaction.
 */
export async function executeCall(client: Db, call: ExecutableCall, ports: ToolPorts): Promise<Outcome> {
  const { tool, order, conversation } = call;
  if (tool.effect !== "read") {
    const change = tool.orderChanges?.(call.args, order) ?? {};
    const irreversibleCents = tool.effect === "irreversible" ? call.impactCents : 0;
    // The order moves only at the version the checks saw, and the budgets and exposure move only with it, in one statement.
    const moved = await moveOrderWithBudgets(client, {
      order,
      change,
      conversation,
      callId: call.callId,
      irreversibleCents,
      exposure: call.exposure ?? null,
    });
    if (!moved) return outcome("order.changed");
  }
  const result = await tool.execute({
    client,
    args: call.args,
    order,
    callId: call.callId,
    tenantId: conversation.tenantId,
    conversationId: conversation.id,
    ports,
  });
  return outcome(tool.external?.pendingCode ?? tool.executedCode, { result });
}
