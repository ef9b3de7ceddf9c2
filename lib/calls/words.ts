import type { Code } from "../outcome";

// What an outcome code means, as a person says it. Pages show these words first and the code beside them, for
// whoever searches the logs or the SPEC.

const OUTCOME_TITLES: Record<Code, string> = {
  "rate.limited": "Too many calls; sent again later it may pass",
  "parse.too-large": "The proposal was larger than toolgate reads (16 KiB)",
  "parse.too-deep": "The proposal was nested too deeply to read",
  "parse.malformed": "The proposal was not valid JSON",
  "parse.duplicate-key": "The proposal named one key twice",
  "parse.envelope-invalid": "The proposal was not a tool's name with its arguments",
  "tool.unknown": "No such tool",
  "tool.not-available": "Not a tool of this conversation",
  "scope.missing": "Not within this agent's permissions (an admin grants them under Policy)",
  "argument.host-owned": "The arguments set a field only toolgate sets (such as customer_id)",
  "schema.invalid": "The arguments do not fit the tool",
  "amount.invalid": "Not a valid amount",
  "currency.invalid": "Not a valid currency",
  "reason.invalid": "Not one of the tool's reasons",
  "order.not-found": "No such order for this conversation's customer",
  "call.not-found": "No such call in this conversation",
  "call-key.missing": "The call key was malformed",
  "call-key.reused": "This call key was used for other arguments",
  "order.not-delivered": "The order is not delivered yet",
  "order.already-shipped": "The order has already shipped",
  "currency.mismatch": "Not the order's currency",
  "amount.exceeds-refundable": "More than the order has left to refund",
  "refund.in-progress": "Another refund of this order is still with the payment provider",
  "agent.not-authorized": "This agent may not do this",
  "order.fraud-hold": "The order is on hold for suspected fraud",
  "policy.rule-denied": "Refused by one of the tenant's rules",
  "policy.rules-failed": "The tenant's rules could not be evaluated, so nothing ran",
  "tool.denied": "Denied by the review of this tool",
  "approval.required": "Held for a supervisor's approval",
  "approval.denied": "Denied",
  "approval.expired": "Expired before anyone decided",
  "approval.withdrawn": "Withdrawn by the agent before anyone decided",
  "upstream.definition-changed": "The tool changed after its review, so nothing was sent",
  "order.changed": "The order changed before the call ran, so nothing ran",
  "refund.outcome-unknown": "Refund reserved and sent to the payment provider",
  "host.error": "Failed on the host's side",
  "upstream.outcome-unknown": "Sent to the tool's server; its answer is not known yet",
  "upstream.unreachable": "The tool's server could not be reached, so nothing was sent",
  "upstream.resolved-not-done": "The tool's server did not do it, as a supervisor found",
  "refund.issued": "Refund issued",
  "address.updated": "Shipping address updated",
  "email.queued": "Status email queued",
  "order.read": "Order read",
  "call.read": "A call's outcome read",
  "upstream.called": "Done by the tool's server",
  "upstream.resolved-done": "Done by the tool's server, as a supervisor found",
};

/** "Refund issued" for `refund.issued`; null for a string that is no outcome's code. */
export function outcomeTitle(code: string): string | null {
  return Object.hasOwn(OUTCOME_TITLES, code) ? OUTCOME_TITLES[code as Code] : null;
}

/** A code's words beside the status a page already shows, or null when they would only repeat it ("Denied", denied). */
export function outcomeTitleBeside(code: string, shown: string): string | null {
  const title = outcomeTitle(code);
  return title?.toLowerCase() === shown.toLowerCase() ? null : title;
}
