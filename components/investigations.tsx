import { formatMoney } from "@/lib/money";

interface Investigation {
  id: string;
  orderId: string;
  amountCents: number;
  currency: string;
  providerKey: string;
  lastError: string | null;
  attempts: number;
  createdAt: Date;
}

/** Refunds whose outcome the provider could not confirm within the reconciliation window; their orders stay blocked. */
export function Investigations({ items }: { items: Investigation[] }) {
  if (items.length === 0) return null;
  return (
    <section className="card" data-testid="investigations">
      <h2 style={{ marginTop: 0 }}>Needs investigation</h2>
      <p className="muted">
        The payment provider has not confirmed these refunds. Each order stays blocked for new refunds until reconciliation settles it; check the
        provider by key.
      </p>
      <table>
        <thead>
          <tr>
            <th>Order</th>
            <th>Amount</th>
            <th>Provider key</th>
            <th>Attempts</th>
            <th>Last error</th>
            <th>Reserved</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.id}>
              <td>{item.orderId}</td>
              <td>{formatMoney(item.amountCents, item.currency)}</td>
              <td>
                <code>{item.providerKey}</code>
              </td>
              <td>{item.attempts}</td>
              <td>{item.lastError ?? ""}</td>
              <td>{item.createdAt.toISOString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
