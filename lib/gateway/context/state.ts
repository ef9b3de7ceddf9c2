import type { Db } from "../../db";
import type { OrderFacts, ToolDefinition, ToolPorts } from "../../tools/types";
import { outcome, pass, stop, type Outcome, type StageResult } from "../../outcome";

/** Stage 9: the tool's own state rules against the order as loaded for this call. */
export function checkState(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  order: OrderFacts,
): StageResult<OrderFacts> {
  const broken = tool.state(args, order);
  return broken ? stop(broken) : pass(order);
}

/**
 * What a call stopped by an unsettled effect on its order is told: which call made that effect, of what amount, so
 * the model waits on it (`get_call_status`) instead of proposing it again. Any other stop is answered as it is.
 */
export async function explainState(
  client: Db,
  tool: ToolDefinition,
  order: OrderFacts,
  stopped: Outcome,
  ports: ToolPorts,
): Promise<Outcome> {
  if (stopped.code !== "refund.in-progress" || !tool.earlierEffects) return stopped;
  const unsettled = await tool.earlierEffects.unsettled(client, order, ports);
  if (!unsettled) return stopped;
  return outcome(stopped.code, {
    awaiting: { call_id: unsettled.callId, amount_cents: unsettled.amountCents, currency: unsettled.currency },
  });
}
