import { formatMoney } from "@/components/money";
import { decidedHistory } from "@/lib/approvals/queue";
import { requireRole } from "@/lib/auth/guards";

export const dynamic = "force-dynamic";

export default async function ApprovalHistoryPage() {
  const user = await requireRole(["SUPERVISOR"]);
  const items = await decidedHistory(user.tenantId);
  return (
    <main>
      <h1>Decided and expired requests</h1>
      <table>
        <thead>
          <tr>
            <th>Requested</th>
            <th>Call</th>
            <th>Status</th>
            <th>Outcome</th>
            <th>Decided by</th>
            <th>Note</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.id} data-testid="history-item" data-approval-id={item.id}>
              <td>{item.createdAt.toISOString()}</td>
              <td>
                <code>{item.toolName}</code> <code>{item.orderId}</code> {formatMoney(item.impactCents, item.preview.impact.currency)}
                <div className="muted">by {item.requestedBy}</div>
              </td>
              <td data-testid="history-status">{item.status}</td>
              <td>
                <code>{item.resultCode}</code>
              </td>
              <td>{item.decidedBy ?? "—"}</td>
              <td>{item.note ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}
