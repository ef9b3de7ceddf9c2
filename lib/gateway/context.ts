import type { Tx } from "../db";
import type { OrderFacts, ToolDefinition } from "../tools/types";
import { pass, stop, type StageResult } from "./outcome";
import type { ConversationFacts } from "./types";

export const ORDER_SELECT = {
  id: true,
  tenantId: true,
  customerId: true,
  totalCents: true,
  refundedCents: true,
  currency: true,
  status: true,
  addressLine1: true,
  postalCode: true,
  fraudHold: true,
  refundPending: true,
  version: true,
  customer: { select: { email: true } },
} as const;

/**
 * Stage 7: load the order the call names. Missing, another customer's, another tenant's and not the
 * conversation's bound order all give the same answer, so ids cannot be enumerated.
 */
export async function loadContext(
  client: Tx,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  conversation: ConversationFacts,
): Promise<StageResult<OrderFacts>> {
  const orderId = tool.orderId(args);
  if (conversation.orderId !== null && conversation.orderId !== orderId) return stop("order.not-found");
  const row = await client.order.findFirst({
    where: { id: orderId, tenantId: conversation.tenantId, customerId: conversation.customerId },
    select: ORDER_SELECT,
  });
  if (!row) return stop("order.not-found");
  const { customer, ...order } = row;
  return pass({ ...order, customerEmail: customer.email });
}
