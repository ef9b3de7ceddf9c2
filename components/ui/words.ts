import { argumentLabel, argumentValue } from "@/lib/approvals/words";

/**
 * Arguments as labelled words, in the approval card's words (`argumentLabel`, `argumentValue`): money formatted (its
 * currency then goes unsaid), reasons without underscores. An amount a supervisor lowered reads as approved, with
 * the proposal's beside it: "50.00 USD (lowered from 55.00 USD)".
 */
export function argumentWords(
  args: Record<string, unknown>,
  approvedCents: number | null = null,
): { key: string; label: string; value: string }[] {
  const currency = typeof args.currency === "string" ? args.currency : "";
  return Object.keys(args)
    .filter((key) => key !== "currency" || typeof args.amount_cents !== "number")
    .map((key) => {
      const value = argumentValue(key, args[key], currency);
      const lowered = key === "amount_cents" && approvedCents != null && approvedCents !== args[key];
      return {
        key,
        label: argumentLabel(key),
        value: lowered ? `${argumentValue(key, approvedCents, currency)} (lowered from ${value})` : value,
      };
    });
}

/** "Postal code" for a list's label. */
export const capitalized = (label: string) => `${label.charAt(0).toUpperCase()}${label.slice(1)}`;
