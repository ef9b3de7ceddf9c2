import type { OrderFacts, ToolDefinition } from "../tools/types";
import { pass, stop, type StageResult } from "./outcome";

/** Stage 9: the tool's own state rules against the order as loaded for this call. */
export function checkState(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  order: OrderFacts,
): StageResult<OrderFacts> {
  const broken = tool.state(args, order);
  return broken ? stop(broken) : pass(order);
}
