import { z } from "zod";
import { defineTool, ORDER_ID } from "./types";

const GetOrderSchema = z.strictObject({
  order_id: z.string().regex(ORDER_ID).describe("The order id, for example ord_1001"),
});

export const getOrder = defineTool<z.infer<typeof GetOrderSchema>>({
  name: "get_order",
  description: "Look up one order of the current customer: status, total, amount refunded so far and currency.",
  schema: GetOrderSchema,
  effect: "read",
  scope: "orders:read",
  orderId: (args) => args.order_id,
  state: () => null,
  impactCents: () => 0,
  // Exactly these fields: no email, no address.
  execute: ({ order }) => ({
    result: {
      order_id: order.id,
      status: order.status,
      total_cents: order.totalCents,
      refunded_cents: order.refundedCents,
      currency: order.currency,
    },
  }),
  executedCode: "order.read",
});
