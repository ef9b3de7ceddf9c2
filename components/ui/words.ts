import { argumentLabel, argumentValue } from "@/lib/approvals/words";
import { formatMoney } from "@/lib/money";

const TOOL_WORDS: Record<string, string> = {
  issue_refund: "refund",
  update_shipping_address: "address change",
  send_status_email: "status email",
  get_order: "order lookup",
};

export const toolWords = (toolName: string) => TOOL_WORDS[toolName] ?? toolName;

/**
 * "80.00 USD refund on ord_1004", "70.00 USD refund on ord_1004 (lowered from 80.00 USD)" when a supervisor approved
 * less, or "address change on ord_1003" for a call that moves no money.
 */
export function callSummary(call: {
  toolName: string;
  orderId: string | null;
  impactCents?: number | null;
  currency?: string | null;
  approvedCents?: number | null;
}): string {
  const lowered = call.approvedCents != null && call.impactCents != null && call.approvedCents !== call.impactCents;
  const cents = lowered ? call.approvedCents : call.impactCents;
  const money = cents && call.currency ? `${formatMoney(cents, call.currency)} ` : "";
  const was = lowered && call.currency ? ` (lowered from ${formatMoney(call.impactCents!, call.currency)})` : "";
  return `${money}${toolWords(call.toolName)}${call.orderId ? ` on ${call.orderId}` : ""}${was}`;
}

/**
 * Arguments as labelled words, in the approval card's words (`argumentLabel`, `argumentValue`) with the label
 * capitalized for a list: money formatted (its currency then goes unsaid), reasons without underscores.
 */
export function argumentWords(args: Record<string, unknown>): [string, string][] {
  const currency = typeof args.currency === "string" ? args.currency : "";
  return Object.keys(args)
    .filter((key) => key !== "currency" || typeof args.amount_cents !== "number")
    .map((key) => {
      const label = argumentLabel(key);
      return [`${label.charAt(0).toUpperCase()}${label.slice(1)}`, argumentValue(key, args[key], currency)];
    });
}

/** "1 write", "3 writes". */
export const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
