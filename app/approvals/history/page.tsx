import { formatMoney } from "@/lib/money";
import Link from "next/link";
import { DecisionLogExport } from "@/components/audit/decision-log-export";
import { decidedHistory, formatCursor, parseCursor } from "@/lib/approvals/queue";
import { requireRole } from "@/lib/auth/guards";

export const dynamic = "force-dynamic";

const PAGE = 50;

export default async function ApprovalHistoryPage({ searchParams }: { searchParams: Promise<{ before?: string }> }) {
  const user = await requireRole(["SUPERVISOR"]);
  const items = await decidedHistory(user.tenantId, { before: parseCursor((await searchParams).before), limit: PAGE });
  return (
    <main>
      <h1>Decided and expired requests</h1>
      <DecisionLogExport tenantId={user.tenantId} />
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
      {items.length === PAGE && (
        <p>
          <Link href={`/approvals/history?before=${encodeURIComponent(formatCursor(items[items.length - 1]))}`}>Older →</Link>
        </p>
      )}
    </main>
  );
}
