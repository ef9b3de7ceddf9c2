import type { PaymentPort } from "../tools/types";
import { completeRefundOfCall, completeReservedRefund, reserveRefund } from "./refunds";
import { findUnsettledRefund, recentRefunds } from "./sql";

/** The payment functions the refund tool is handed through its execution context (lib/tools/types.ts). */
export const paymentPort: PaymentPort = {
  reserveRefund,
  completeRefundOfCall: (callId) => completeRefundOfCall(callId),
  completeReservedRefund: (reserved) => completeReservedRefund(reserved),
  recentRefunds,
  findUnsettledRefund,
};
