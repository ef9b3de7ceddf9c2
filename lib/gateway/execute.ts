import type { Tx } from "../db";
import type { OrderFacts, ToolDefinition } from "../tools/types";
import { outcome, type Outcome } from "./outcome";
import type { ConversationFacts } from "./types";

export interface ExecutableCall {
  tool: ToolDefinition;
  args: Record<string, unknown>;
  order: OrderFacts;
  conversation: ConversationFacts;
  impactCents: number;
  callId: string;
}

/**
 * Stage 12. For a write, the caller's transaction holds the conversation lock; the order changes only if it
 * is still at the version every check saw, and the effect and the budgets land in the same transaction.
 */
export async function executeCall(client: Tx, call: ExecutableCall): Promise<Outcome> {
  const { tool, order, conversation } = call;
  if (tool.effect !== "read") {
    const moved = await client.order.updateMany({
      where: { id: order.id, version: order.version },
      data: { ...tool.orderChanges?.(call.args, order), version: { increment: 1 }, updatedAt: new Date() },
    });
    if (moved.count !== 1) return outcome("order.changed");
  }
  const result = await tool.execute({
    client,
    args: call.args,
    order,
    callId: call.callId,
    tenantId: conversation.tenantId,
    conversationId: conversation.id,
  });
  if (tool.effect !== "read") {
    await client.conversation.update({
      where: { id: conversation.id },
      data: {
        writesMade: { increment: 1 },
        irreversibleCents: { increment: tool.effect === "irreversible" ? call.impactCents : 0 },
      },
      select: { id: true },
    });
  }
  return outcome(tool.external?.pendingCode ?? tool.executedCode, { result });
}
