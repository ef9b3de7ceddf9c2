"use client";

import { useId } from "react";
import { centsOfTyped, formatMoney } from "@/lib/money";

/**
 * An amount typed to lower a refund before approving it: its cents when the approval may take it (0.01 up to
 * `maxCents`), else what is wrong, in words. The desk's dialog and the emailed link's page read it alike.
 */
export function loweredAmount(
  typed: string,
  maxCents: number,
  currency: string,
): { cents: number; problem: null } | { cents: null; problem: string } {
  const cents = centsOfTyped(typed);
  if (cents !== null && cents >= 1 && cents <= maxCents) return { cents, problem: null };
  if (cents === null && typed.trim())
    return {
      cents: null,
      problem: `Write the amount as a number with at most two decimals, for example ${(maxCents / 100).toFixed(2)}.`,
    };
  return {
    cents: null,
    problem: `Enter an amount from 0.01 up to ${formatMoney(maxCents, currency)}; an approval can only lower it.`,
  };
}

/** The field that lowers a refund, with what may change; `problem`, when given, is said beside it. */
export function AmountToRefund({
  currency,
  maxCents,
  value,
  onChange,
  problem,
}: {
  currency: string;
  maxCents: number;
  value: string;
  /** A new amount is a new try: the caller drops the last one's complaint. */
  onChange(value: string): void;
  problem?: string | null;
}) {
  const help = useId();
  return (
    <label className="field">
      Amount to refund ({currency}, at most {formatMoney(maxCents, currency)})
      <input
        inputMode="decimal"
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-describedby={help}
        aria-invalid={problem ? true : undefined}
      />
      {problem && (
        <span className="error" role="alert" data-testid="amount-problem">
          {problem}
        </span>
      )}
      <span id={help} className="muted small">
        You may lower the amount; order, customer, currency and reason stay as proposed.
      </span>
    </label>
  );
}
