import { ApprovalQueue } from "@/components/approval-queue";
import { pendingQueue } from "@/lib/approvals/queue";
import { requireRole } from "@/lib/auth/guards";

export const dynamic = "force-dynamic";

export default async function ApprovalsPage() {
  const user = await requireRole(["SUPERVISOR"]);
  const items = await pendingQueue(user.tenantId);
  const serializable = items.map((item) => ({ ...item, createdAt: item.createdAt.toISOString(), expiresAt: item.expiresAt.toISOString(), decidedAt: undefined }));
  return (
    <main>
      <h1>Pending approvals</h1>
      <p className="muted">Oldest first. Each approval covers exactly the call shown and is re-checked against current data when you approve.</p>
      <ApprovalQueue items={serializable} />
    </main>
  );
}
