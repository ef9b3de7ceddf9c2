import type { Db, Tx } from "../../db";
import type { OrderFacts, ToolDefinition, ToolPorts } from "../../tools/types";
import { outcome, type Outcome } from "../../outcome";
import { moveOrderWithEffect } from "./sql";
import type { Exposure } from "../decide/sql";
import type { CallRecord, ConversationFacts } from "../types";

export interface ExecutableCall {
  tool: ToolDefinition;
  args: Record<string, unknown>;
  order: OrderFacts;
  conversation: ConversationFacts;
  impactCents: number;
  callId: string;
  /** The exposure ceilings' claim of an irreversible effect executed without approval (`Exposure`). */
  exposure?: Exposure | null;
  /** The transaction the effect's statement commits in its own round trip, if it moves the order (`moveOrderWithEffect`). */
  commit?: Tx | null;
}

/**
 * Stage 12. For a write, the caller's transaction holds the conversation lock; the order changes only if it is still
 * at the version every check saw, and the tool's writes, the budgets and the exposure land with it in one statement.
 * `recordAs` (the pipeline's) records the call in that statement too, with the outcome it gets: stages 12 and 13 in one
 * round trip; a caller that records the call its own way (an approval) leaves it out. When the statement reserves the
 * call's exposure itself (`reserveCents`) and a ceiling refuses, nothing is written and the answer is null: the
 * call is for a person to decide.
 */
export async function executeCall(
  client: Db,
  call: ExecutableCall & { exposure: { reserveCents: number } },
  ports: ToolPorts,
  recordAs: (result: Outcome) => CallRecord,
): Promise<Outcome | null>;
export async function executeCall(
  client: Db,
  call: ExecutableCall & { exposure?: Exclude<Exposure, { reserveCents: number }> | null },
  ports: ToolPorts,
  recordAs?: (result: Outcome) => CallRecord,
): Promise<Outcome>;
export async function executeCall(
  client: Db,
  call: ExecutableCall,
  ports: ToolPorts,
  recordAs?: (result: Outcome) => CallRecord,
): Promise<Outcome | null> {
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
    commit: call.commit ?? null,
  });
  if (moved === "refused") return null;
  return moved === "moved" ? executed : changed;
}
