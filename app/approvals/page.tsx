import { ApprovalQueue } from "@/components/approval-queue";
import { Investigations } from "@/components/investigations";
import Link from "next/link";
import { formatCursor, parseCursor, pendingQueue } from "@/lib/approvals/queue";
import { requireRole } from "@/lib/auth/guards";
import { reconcileHealth, refundsToInvestigate } from "@/lib/payments/reconcile";

export const dynamic = "force-dynamic";

const PAGE = 50;

export default async function ApprovalsPage({ searchParams }: { searchParams: Promise<{ after?: string }> }) {
  const user = await requireRole(["SUPERVISOR"]);
  const after = parseCursor((await searchParams).after);
  const [items, investigations, health] = await Promise.all([
    pendingQueue(user.tenantId, { after, limit: PAGE }),
    refundsToInvestigate(user.tenantId),
    reconcileHealth(),
  ]);
  const serializable = items.map((item) => ({ ...item, createdAt: item.createdAt.toISOString(), expiresAt: item.expiresAt.toISOString(), decidedAt: undefined }));
  return (
    <main>
      <Investigations
        items={investigations.map((item) => ({ ...item, createdAt: item.createdAt.toISOString() }))}
        health={health && { ...health, checkedAt: health.checkedAt.toISOString(), lastOkAt: health.lastOkAt?.toISOString() ?? null }}
      />
      <h1>Pending approvals</h1>
      <p className="muted">Oldest first. Each approval covers exactly the call shown and is re-checked against current data when you approve.</p>
      <ApprovalQueue items={serializable} />
      {items.length === PAGE && (
        <p>
          <Link href={`/approvals?after=${encodeURIComponent(formatCursor(items[items.length - 1]))}`}>Next page →</Link>
        </p>
      )}
    </main>
  );
}
