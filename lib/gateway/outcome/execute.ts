import type { Db } from "../../db";
import type { OrderFacts, ToolDefinition, ToolPorts } from "../../tools/types";
import { outcome, type Outcome } from "../../outcome";
import { moveOrderWithEffect } from "./sql";
import { type ExposureReservation } from "../decide/sql";
import type { CallRecord, ConversationFacts } from "../types";

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
 * Stage 12. For a write, the caller's transaction holds the conversation lock; the order changes only if it is still
 * at the version every check saw, and the tool's writes, the budgets and the exposure land with it in one statement.
 * `recordAs` (the pipeline's) records the call in that statement too, with the outcome it gets: stages 12 and 13 in one
 * round trip; a caller that records the call its own way (an approval) leaves it out.
 */
export async function executeCall(
  client: Db,
  call: ExecutableCall,
  ports: ToolPorts,
  recordAs?: (result: Outcome) => CallRecord,
): Promise<Outcome> {
  const { tool, order, conversation } = call;
  const effect = tool.execute({
    args: call.args,
    order,
    callId: call.callId,
    tenantId: conversation.tenantId,
    conversationId: conversation.id,
    agentId: conversation.agentId,
    ports,
  });
  const executed = outcome(tool.external?.pendingCode ?? tool.executedCode, { result: effect.result });
  if (tool.effect === "read") return executed;
  const changed = outcome("order.changed");
  const moved = await moveOrderWithEffect(client, {
    order,
    change: tool.orderChanges?.(call.args, order) ?? {},
    conversation,
    callId: call.callId,
    irreversibleCents: tool.effect === "irreversible" ? call.impactCents : 0,
    exposure: call.exposure ?? null,
    writes: effect.writes ?? [],
    record: recordAs ? { moved: recordAs(executed), changed: recordAs(changed) } : null,
  });
  return moved ? executed : changed;
}
