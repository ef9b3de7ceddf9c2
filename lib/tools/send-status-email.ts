import { z } from "zod";
import { queueMessagesWith } from "../db/outbox";
import { MOVED } from "./sql";
import { defineTool, ORDER_ID } from "./types";

const SendStatusEmailSchema = z.strictObject({
  order_id: z.string().regex(ORDER_ID).describe("The order whose status is emailed to its customer"),
});

export const sendStatusEmail = defineTool<z.infer<typeof SendStatusEmailSchema>>({
  name: "send_status_email",
  description: "Email the customer the current status of their order. The recipient is the order's customer.",
  schema: SendStatusEmailSchema,
  effect: "irreversible",
  scope: "email:send",
  orderId: (args) => args.order_id,
  state: () => null,
  impactCents: () => 0,
  execute({ order, callId, tenantId }) {
    // The recipient comes from the order, never from the model.
    const queued = queueMessagesWith(
      { tenantId, orderId: order.id, toolCallId: callId },
      [
        {
          kind: "status_email",
          recipient: order.customerEmail,
          subject: `Your order ${order.id} is ${order.status}`,
          body: `Hello,\n\nyour order ${order.id} is ${order.status}.\n`,
        },
      ],
      MOVED,
    );
    return { result: { order_id: order.id, message_id: queued.ids[0] }, writes: [queued.statement] };
  },
  executedCode: "email.queued",
});
