import { z } from "zod";
import { defineTool, ORDER_ID, type OrderFacts, type RefundDecision } from "./types";

export const REFUND_REASONS = ["damaged", "not_as_described", "late", "not_delivered", "wrong_item", "other"] as const;

const IssueRefundSchema = z.strictObject({
  order_id: z.string().regex(ORDER_ID).describe("The order to refund"),
  amount_cents: z.int().min(1).max(100000).describe("Amount to refund in minor units (cents), 1..100000"),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .describe("ISO 4217 currency code of the order, for example USD"),
  reason: z.enum(REFUND_REASONS).describe("Why the customer is refunded"),
});

type IssueRefund = z.infer<typeof IssueRefundSchema>;

/** The refund as the host decides it, from the checked arguments and the order the checks saw. */
const decisionOf = (args: IssueRefund, order: OrderFacts, tenantId: string): RefundDecision => ({
  tenantId,
  orderId: order.id,
  orderVersion: order.version,
  amountCents: args.amount_cents,
  currency: args.currency,
  reason: args.reason,
});

export const issueRefund = defineTool<IssueRefund>({
  name: "issue_refund",
  description:
    "Refund part or all of a delivered order to the customer's original payment method. Large refunds wait for a supervisor.",
  schema: IssueRefundSchema,
  semanticCodes: { amount_cents: "amount.invalid", currency: "currency.invalid", reason: "reason.invalid" },
  effect: "irreversible",
  scope: "refunds:write",
  orderId: (args) => args.order_id,
  state(args, order) {
    if (order.status !== "delivered") return "order.not-delivered";
    if (args.currency !== order.currency) return "currency.mismatch";
    if (args.amount_cents > order.totalCents - order.refundedCents) return "amount.exceeds-refundable";
    if (order.refundPending) return "refund.in-progress";
    return null;
  },
  narrowable: ["amount_cents"],
  impactCents: (args) => args.amount_cents,
  // The reservation counts against the refundable balance at once; a refusal gives it back.
  orderChanges: (args) => ({ refundedCentsIncrement: args.amount_cents, refundPending: true }),
  execute({ args, order, callId, tenantId, agentId, ports }) {
    const refund = ports.payments.reserveRefund(decisionOf(args, order, tenantId), callId, {
      agentId,
      customerId: order.customerId,
    });
    return {
      result: {
        order_id: order.id,
        refund_id: refund.refundId,
        amount_cents: args.amount_cents,
        currency: args.currency,
        refunded_cents: order.refundedCents + args.amount_cents,
      },
      writes: [refund.statement],
    };
  },
  executedCode: "refund.issued",
  earlierEffects: {
    recent: (hours, ports) => ports.payments.recentRefunds(hours),
    unsettled: (client, order, ports) => ports.payments.findUnsettledRefund(client, order.id),
  },
  external: {
    pendingCode: "refund.outcome-unknown",
    complete: ({ callId, executed }, ports) =>
      executed
        ? ports.payments.completeReservedRefund({
            callId,
            decision: decisionOf(executed.args, executed.order, executed.tenantId),
            committedAt: executed.committedAt,
          })
        : ports.payments.completeRefundOfCall(callId),
  },
});
