import { formatMoney } from "@/lib/money";

/** An amount as people read it (`80.00 USD`), never broken between the number and its currency on a narrow screen. */
export function Money({ cents, currency }: { cents: number; currency: string }) {
  return <span className="money">{formatMoney(cents, currency)}</span>;
}
