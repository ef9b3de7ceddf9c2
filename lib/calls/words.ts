// What an outcome code means, as a person says it. Pages show these words first and the code beside them, for
// whoever searches the logs or the SPEC.

const OUTCOME_TITLES: Record<string, string> = {
  "approval.required": "Held for a supervisor's approval",
  "approval.denied": "Denied",
  "approval.expired": "Expired before anyone decided",
  "approval.withdrawn": "Withdrawn by the agent before anyone decided",
  "refund.outcome-unknown": "Refund reserved and sent to the payment provider",
  "refund.issued": "Refund issued",
  "address.updated": "Shipping address updated",
  "email.queued": "Status email queued",
  "order.read": "Order read",
  "host.error": "Failed on the host's side",
  "order.not-found": "No such order for this conversation's customer",
  "order.not-delivered": "The order is not delivered yet",
  "order.already-shipped": "The order has already shipped",
  "amount.exceeds-refundable": "More than the order has left to refund",
  "currency.mismatch": "Not the order's currency",
  "refund.in-progress": "Another refund of this order is still with the payment provider",
  "schema.invalid": "The arguments do not fit the tool",
  "tool.unknown": "No such tool",
  "agent.not-authorized": "This agent may not do this",
  "policy.rule-denied": "Refused by one of the tenant's rules",
  "call-key.reused": "This call key was used for other arguments",
  "rate.limited": "Too many calls; sent again later it may pass",
};

/** "Refund issued" for `refund.issued`; null for a code without words of its own. */
export function outcomeTitle(code: string): string | null {
  return OUTCOME_TITLES[code] ?? null;
}

/** A code's words beside the status a page already shows, or null when they would only repeat it ("Denied", denied). */
export function outcomeTitleBeside(code: string, shown: string): string | null {
  const title = outcomeTitle(code);
  return title?.toLowerCase() === shown.toLowerCase() ? null : title;
}
