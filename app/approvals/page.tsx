import Link from "next/link";
import { ApprovalQueue } from "@/components/approvals/approval-queue";
import { QueueFilterForm } from "@/components/approvals/queue-filters";
import { QueueLive } from "@/components/approvals/queue-live";
import { Investigations } from "@/components/investigations";
import { PendingChanges } from "@/components/admin/pending-changes";
import { pendingChanges } from "@/lib/admin";
import { cardFacts, deskPolicy, queueChoices } from "@/lib/approvals/cards";
import { parseQueueFilters, queueSearchParams } from "@/lib/approvals/filters";
import { formatQueueCursor, pendingQueue, queueStamp } from "@/lib/approvals/queue";
import { passkeysOf } from "@/lib/auth/passkeys";
import { requireRole } from "@/lib/auth/guards";
import { reconcileHealth, refundsToInvestigate } from "@/lib/payments/reconcile";

export const dynamic = "force-dynamic";

const PAGE = 50;

export default async function ApprovalsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const user = await requireRole(["SUPERVISOR"]);
  const params = await searchParams;
  const filters = parseQueueFilters(params);
  const cursor = typeof params.after === "string" ? params.after : undefined;
  // Taken before the cards: a change in between makes the live stream's next stamp differ, so the desk refreshes.
  const shown = await queueStamp(user.tenantId);
  const [items, investigations, health, policy, choices, passkeys, adminChanges] = await Promise.all([
    pendingQueue(user.tenantId, { cursor, limit: PAGE, filters }),
    refundsToInvestigate(user.tenantId),
    reconcileHealth(),
    deskPolicy(user.tenantId),
    queueChoices(user.tenantId),
    passkeysOf(user.id),
    pendingChanges(user.tenantId),
  ]);
  const facts = await cardFacts(user.tenantId, items);
  const cards = items.map((item) => ({
    ...item,
    createdAt: item.createdAt.toISOString(),
    expiresAt: item.expiresAt.toISOString(),
    decidedAt: undefined,
    facts: facts[item.id],
  }));
  const next =
    items.length === PAGE ? queueSearchParams(filters, formatQueueCursor(items[items.length - 1], filters.sort)) : null;
  return (
    <main>
      {adminChanges.length > 0 && (
        <section aria-labelledby="admin-changes">
          <h2 id="admin-changes">Admin changes waiting: cancel any you did not expect</h2>
          <PendingChanges
            changes={adminChanges}
            viewerId={user.id}
            canApprove={false}
            hasPasskey={passkeys.length > 0}
          />
        </section>
      )}
      <Investigations
        hasPasskey={passkeys.length > 0}
        items={investigations.map((item) => ({ ...item, createdAt: item.createdAt.toISOString() }))}
        health={
          health && {
            ...health,
            checkedAt: health.checkedAt.toISOString(),
            lastOkAt: health.lastOkAt?.toISOString() ?? null,
          }
        }
      />
      <div className="title-row">
        <h1>Pending approvals</h1>
        <QueueLive shownStamp={shown.stamp} />
      </div>
      <p className="muted">
        Each approval covers exactly the call shown and is re-checked against current data when you approve.
      </p>
      <QueueFilterForm filters={filters} agents={choices.agents} tools={choices.tools} />
      <ApprovalQueue items={cards} policy={policy} me={user.email} hasPasskey={passkeys.length > 0} />
      <p className="pager">
        {cursor && <Link href={`/approvals?${queueSearchParams(filters, null)}`}>← First page</Link>}{" "}
        {next && <Link href={`/approvals?${next}`}>Next page →</Link>}
      </p>
    </main>
  );
}
