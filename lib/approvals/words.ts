import type { HeldReason } from "../gateway";
import { UNKNOWN_TOOL } from "../outcome";
import { formatMoney } from "../money";
import { count } from "../words";

// Requests and decisions as a supervisor says them; shared by the queue's cards, dialogs and toasts.

/** The longest reason for a denial a supervisor may give; the history keeps it whole. */
export const MAX_DENY_REASON = 500;
/** How much of that reason the model reads: the first this many characters, on one line. */
export const MODEL_NOTE_MAX = 280;

interface Titled {
  toolName: string;
  amountCents: number;
  currency: string;
}

/** "Refund 80.00 USD", "Change the shipping address", "Send a status email". */
export function requestTitle(request: Titled): string {
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

const TOOL_WORDS: Record<string, string> = {
  issue_refund: "refund",
  update_shipping_address: "address change",
  send_status_email: "status email",
  get_order: "order lookup",
  // A proposal refused before it named a tool the conversation offers (not JSON, or no such tool).
  [UNKNOWN_TOOL]: "call to no tool it may use",
};

/** "refund" for `issue_refund`; a tool without words of its own by its name. */
export const toolWords = (toolName: string) => TOOL_WORDS[toolName] ?? toolName;

/**
 * A request or a call in a phrase: "80.00 USD refund on ord_1004", "70.00 USD refund on ord_1004 (lowered from
 * 80.00 USD)" when a supervisor approved less, "address change on ord_1003" for a call that moves no money, and
 * "read_file call" for an upstream server's tool.
 */
export function requestPhrase(request: {
  toolName: string;
  orderId: string | null;
  amountCents?: number | null;
  currency?: string | null;
  /** What the supervisor approved, when the approval is known. */
  approvedCents?: number | null;
}): string {
  // An upstream server's request names the server where an order would be (`upstream:<server>`).
  if (request.orderId?.startsWith("upstream:")) return `${request.toolName} call`;
  const { amountCents, approvedCents, currency } = request;
  const lowered = approvedCents != null && amountCents != null && approvedCents !== amountCents;
  const cents = lowered ? approvedCents : amountCents;
  const money = cents && currency ? `${formatMoney(cents, currency)} ` : "";
  const was = lowered && currency ? ` (lowered from ${formatMoney(amountCents, currency)})` : "";
  return `${money}${toolWords(request.toolName)}${request.orderId ? ` on ${request.orderId}` : ""}${was}`;
}

const EARLIER_STATUS = {
  issued: "was already refunded",
  unknown: "may already have been refunded (the payment provider has not confirmed it)",
  in_progress: "is being refunded",
} as const;

/**
 * What the duplicate-intent guard matched: "41.00 USD was already refunded on this order within the last 24 hours",
 * naming the earlier call last, by id, unless the caller links it (`earlierCall: false`).
 */
export function duplicateText(
  reason: Extract<HeldReason, { rule: "possible_duplicate" }>,
  currency: string,
  { earlierCall = true } = {},
): string {
  const hours = count(reason.window_hours, "hour");
  const which = earlierCall ? ` (earlier call ${reason.of_call_id})` : "";
  return `${formatMoney(reason.amount_cents, currency)} ${EARLIER_STATUS[reason.status]} on this order within the last ${hours}${which}`;
}

/**
 * Why the checks held the call, with the limit's numbers. A possible duplicate names the earlier call last, by id,
 * unless the caller links it (`earlierCall: false`).
 */
export function heldText(reason: HeldReason, currency: string, { earlierCall = true } = {}): string {
  const money = (cents: number) => formatMoney(cents, currency);
  switch (reason.rule) {
    case "auto_limit_cents":
      return `${money(reason.amount_cents)} is above the ${money(reason.limit_cents)} limit for refunds without approval`;
    case "session_cap_cents":
      if (reason.spent_cents === 0)
        return `${money(reason.amount_cents)} passes this conversation's ${money(reason.cap_cents)} cap`;
      return `${money(reason.spent_cents)} already moved in this conversation plus ${money(reason.amount_cents)} passes its ${money(reason.cap_cents)} cap`;
    case "max_auto_writes":
      return `this conversation already made ${count(reason.writes_made, "change")}; only ${reason.limit} go through without approval`;
    case "agent_daily_ceiling_cents":
    case "tenant_daily_ceiling_cents":
      return `${money(reason.used_cents)} already moved without approval in the last 24 hours ${reason.rule === "agent_daily_ceiling_cents" ? "by this agent" : "in this tenant"} plus ${money(reason.amount_cents)} passes the ${money(reason.limit_cents)} daily ceiling`;
    case "policy_rule":
      return `the tenant's rule "${reason.id}": ${reason.reason}`;
    case "possible_duplicate":
      return `possible duplicate: ${duplicateText(reason, currency, { earlierCall })}`;
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
