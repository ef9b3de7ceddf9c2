export function formatMoney(cents: number, currency: string): string {
  return `${(cents / 100).toFixed(2)} ${currency}`;
}

/** The `amount_cents` a call's arguments carry (those proposed, or those a supervisor approved), or null. */
export function amountCentsOf(args: unknown): number | null {
  const cents = (args as { amount_cents?: unknown } | null)?.amount_cents;
  return typeof cents === "number" ? cents : null;
}
