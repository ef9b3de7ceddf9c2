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
};

/** "Refund issued" for `refund.issued`; null for a code without words of its own. */
export function outcomeTitle(code: string): string | null {
  return OUTCOME_TITLES[code] ?? null;
}
