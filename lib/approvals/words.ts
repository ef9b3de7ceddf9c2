import type { HeldReason } from "../gateway";
import { formatMoney } from "../money";

// Requests and decisions as a supervisor says them; shared by the queue's cards, dialogs and toasts.

interface Described {
  toolName: string;
  orderId: string;
  amountCents: number;
  currency: string;
}

/** "Refund 80.00 USD", "Change the shipping address", "Send a status email". */
export function requestTitle(request: Omit<Described, "orderId">): string {
  switch (request.toolName) {
    case "issue_refund":
      return `Refund ${formatMoney(request.amountCents, request.currency)}`;
    case "update_shipping_address":
      return "Change the shipping address";
    case "send_status_email":
      return "Send a status email";
    default:
      return request.toolName;
  }
}

/** "80.00 USD refund on ord_1004". */
export function requestPhrase(request: Described): string {
  // An upstream server's request names the server where an order would be (`upstream:<server>`).
  if (request.orderId.startsWith("upstream:")) return `${request.toolName} call`;
  switch (request.toolName) {
    case "issue_refund":
      return `${formatMoney(request.amountCents, request.currency)} refund on ${request.orderId}`;
    case "update_shipping_address":
      return `address change on ${request.orderId}`;
    case "send_status_email":
      return `status email on ${request.orderId}`;
    default:
      return `${request.toolName} on ${request.orderId}`;
  }
}

const EARLIER_STATUS = {
  issued: "was already refunded",
  unknown: "may already have been refunded (the payment provider has not confirmed it)",
  in_progress: "is being refunded",
} as const;

/** Why the checks held the call, with the limit's numbers. */
export function heldText(reason: HeldReason, currency: string): string {
  const money = (cents: number) => formatMoney(cents, currency);
  switch (reason.rule) {
    case "auto_limit_cents":
      return `${money(reason.amount_cents)} is above the ${money(reason.limit_cents)} limit for refunds without approval`;
    case "session_cap_cents":
      if (reason.spent_cents === 0)
        return `${money(reason.amount_cents)} passes this conversation's ${money(reason.cap_cents)} cap`;
      return `${money(reason.spent_cents)} already moved in this conversation plus ${money(reason.amount_cents)} passes its ${money(reason.cap_cents)} cap`;
    case "max_auto_writes":
      return `this conversation already made ${reason.writes_made} ${reason.writes_made === 1 ? "change" : "changes"}; only ${reason.limit} go through without approval`;
    case "agent_daily_ceiling_cents":
    case "tenant_daily_ceiling_cents":
      return `${money(reason.used_cents)} already moved without approval in the last 24 hours ${reason.rule === "agent_daily_ceiling_cents" ? "by this agent" : "in this tenant"} plus ${money(reason.amount_cents)} passes the ${money(reason.limit_cents)} daily ceiling`;
    case "policy_rule":
      return `the tenant's rule "${reason.id}": ${reason.reason}`;
    case "possible_duplicate":
      return `possible duplicate of ${reason.of_call_id}: ${money(reason.amount_cents)} ${EARLIER_STATUS[reason.status]} on this order within the last ${reason.window_hours} ${reason.window_hours === 1 ? "hour" : "hours"}`;
  }
}

export function argumentLabel(key: string): string {
  return (
    {
      order_id: "order",
      amount_cents: "amount",
      currency: "currency",
      reason: "reason",
      line1: "address",
      postal_code: "postal code",
    }[key] ?? key.replace(/_/g, " ")
  );
}

export function argumentValue(key: string, value: unknown, currency: string): string {
  if (key === "amount_cents" && typeof value === "number") return formatMoney(value, currency);
  if (key === "reason" && typeof value === "string") return value.replace(/_/g, " ");
  return String(value);
}
