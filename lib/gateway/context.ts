import type { Db } from "../db";
import { findCustomerOrder } from "../tools/sql";
import type { OrderFacts, ToolDefinition } from "../tools/types";
import { pass, stop, type StageResult } from "../outcome";
import type { ConversationFacts } from "./types";

/**
 * Stage 7: load the order the call names. Missing, another customer's, another tenant's and not the
 * conversation's bound order all give the same answer, so ids cannot be enumerated.
 */
export async function loadContext(
  client: Db,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  conversation: ConversationFacts,
): Promise<StageResult<OrderFacts>> {
  const orderId = tool.orderId(args);
  if (conversation.orderId !== null && conversation.orderId !== orderId) return stop("order.not-found");
  const order = await findCustomerOrder(client, orderId, conversation);
  if (!order) return stop("order.not-found");
  return pass(order);
}
