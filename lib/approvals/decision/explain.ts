import { formatMoney } from "../../money";
import type { Outcome } from "../../outcome";
import type { OrderFacts } from "../../tools/types";

/**
 * What stops an approval at its re-check: the fact that changed, in numbers. The supervisor reads money as money; the
 * model (`forModel`) also gets the cents it proposed in.
 */
export function explainRecheck(
  failed: Outcome,
  order: OrderFacts | null,
  requestedCents: number,
  forModel = false,
): string {
  switch (failed.code) {
    case "amount.exceeds-refundable": {
      if (!order) return "the amount exceeds what is refundable now; nothing was executed";
      const refundable = order.totalCents - order.refundedCents;
      const money = (cents: number) => `${formatMoney(cents, order.currency)}${forModel ? ` (${cents} cents)` : ""}`;
      return `only ${money(refundable)} is refundable now, the request was for ${money(requestedCents)}; nothing was executed`;
    }
    case "order.not-delivered":
      return `the order is now ${order?.status ?? "not delivered"}; nothing was executed`;
    case "order.already-shipped":
      return `the order is now ${order?.status ?? "shipped"}; nothing was executed`;
    case "refund.in-progress":
      return "another refund on this order is still settling; nothing was executed";
    case "order.fraud-hold":
      return "the order is now on fraud hold; nothing was executed";
    case "policy.rule-denied":
      return "a rule of this tenant now refuses this call; nothing was executed";
    case "policy.rules-failed":
      return "this tenant's rules could not be evaluated, so nothing was executed";
    case "agent.not-authorized":
      return "the requesting agent no longer has this permission; nothing was executed";
    case "order.not-found":
      return "the order is no longer reachable from this conversation; nothing was executed";
    default:
      return `re-check failed (${failed.code}); nothing was executed`;
  }
}
