export function formatMoney(cents: number, currency: string): string {
  return `${(cents / 100).toFixed(2)} ${currency}`;
}

/** The `amount_cents` a call's arguments carry (those proposed, or those a supervisor approved), or null. */
export function amountCentsOf(args: unknown): number | null {
  const cents = (args as { amount_cents?: unknown } | null)?.amount_cents;
  return typeof cents === "number" ? cents : null;
}

/** An amount a person typed ("80", "80.5", "80,50": up to 9,999,999.99) in cents, exactly; null when it is not one. */
export function centsOfTyped(text: string): number | null {
  const match = /^\s*(\d{1,7})(?:[.,](\d{1,2}))?\s*$/.exec(text);
  if (!match) return null;
  return Number(match[1]) * 100 + Number((match[2] ?? "0").padEnd(2, "0"));
}
