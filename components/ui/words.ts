import { argumentLabel, argumentValue } from "@/lib/approvals/words";

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
