import { z } from "zod";
import { newId } from "../ids";
import { insertAddressChange } from "./sql";
import { defineTool, ORDER_ID } from "./types";

// No control, format or line/paragraph separator characters: an address is one printable line. The gateway
// enforces this; the model is shown the part every regex engine compiles (no control characters), since
// Python's `re` and others have no \p{...} classes.
const ONE_LINE = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;
const ONE_LINE_PORTABLE = "^[^\\x00-\\x1F\\x7F-\\x9F]+$";

const UpdateShippingAddressSchema = z.strictObject({
  order_id: z.string().regex(ORDER_ID).describe("The order whose shipping address changes"),
  line1: z
    .string()
    .min(1)
    .max(80)
    .regex(ONE_LINE)
    .meta({ description: "Street address, one line, at most 80 characters", pattern: ONE_LINE_PORTABLE }),
  postal_code: z
    .string()
    .regex(/^[0-9]{5}$/)
    .describe("Five-digit postal code"),
});

export const updateShippingAddress = defineTool<z.infer<typeof UpdateShippingAddressSchema>>({
  name: "update_shipping_address",
  description: "Change the shipping address of an order that has not shipped yet.",
  schema: UpdateShippingAddressSchema,
  effect: "reversible",
  scope: "orders:write",
  orderId: (args) => args.order_id,
  state: (_args, order) => (order.status === "processing" ? null : "order.already-shipped"),
  impactCents: () => 0,
  orderChanges: (args) => ({ addressLine1: args.line1, postalCode: args.postal_code }),
  execute({ args, order, callId }) {
    const change = insertAddressChange({
      id: newId("ac"),
      orderId: order.id,
      toolCallId: callId,
      from: { line1: order.addressLine1, postalCode: order.postalCode },
      to: { line1: args.line1, postalCode: args.postal_code },
    });
    return { result: { order_id: order.id, line1: args.line1, postal_code: args.postal_code }, writes: [change] };
  },
  executedCode: "address.updated",
});
