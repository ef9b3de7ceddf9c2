import Link from "next/link";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";
import { ApprovalQueue } from "./approval-queue";
import { QueueFilterForm } from "./queue-filters";
import { QueueLive } from "./queue-live";
import { PendingChanges } from "@/components/admin/changes/pending-changes";
import { Investigations } from "@/components/payments/investigations";
import { OverpaidRefunds } from "@/components/payments/overpaid";
import { UnknownUpstreamCalls, type UnknownCall } from "@/components/upstream/unknown-calls";
import type { pendingChanges } from "@/lib/admin/changes/two-admin";
import type { CardFacts, queueChoices } from "@/lib/approvals/desk/cards";
import type { DeskPolicy } from "@/lib/approvals/desk/cards";
import type { QueueFilters } from "@/lib/approvals/desk/filters";
import type { QueueItem } from "@/lib/approvals/desk/queue";
import type { overpaidRefunds } from "@/lib/payments/reconcile/overpaid";
import type { reconcileHealth, refundsToInvestigate } from "@/lib/payments/reconcile/reconcile";

/**
 * The supervisor's desk: admin changes to cancel, refunds to investigate and refunds paid past their order, then the pending requests with their
 * filters, live refresh and pages. `firstPage` and `nextPage` are the pager's query strings, null where there is none.
 */
export function ApprovalDesk({
  me,
  stamp,
  pendingCount,
  items,
  facts,
  filters,
  choices,
  policy,
  stepUp,
  investigations,
  overpaid,
  health,
  adminChanges,
  unknownUpstream,
  firstPage,
  nextPage,
}: {
  me: { id: string; email: string };
  stamp: string;
  /** How many requests are pending in the tenant, read with `stamp`. */
  pendingCount: number;
  items: QueueItem[];
  facts: Record<string, CardFacts>;
  filters: QueueFilters;
  choices: Awaited<ReturnType<typeof queueChoices>>;
  policy: DeskPolicy;
  stepUp: StepUpWay;
  investigations: Awaited<ReturnType<typeof refundsToInvestigate>>;
  overpaid: Awaited<ReturnType<typeof overpaidRefunds>>;
  health: Awaited<ReturnType<typeof reconcileHealth>>;
  adminChanges: Awaited<ReturnType<typeof pendingChanges>>;
  unknownUpstream: UnknownCall[];
  firstPage: string | null;
  nextPage: string | null;
}) {
  const hasPasskey = stepUp.with === "passkey";
  const cards = items.map((item) => ({
    ...item,
    createdAt: item.createdAt.toISOString(),
    expiresAt: item.expiresAt.toISOString(),
    facts: facts[item.id],
  }));
  return (
    <main id="main">
      {adminChanges.length > 0 && (
        <section aria-labelledby="admin-changes">
          <h2 id="admin-changes">Admin changes waiting: cancel any you did not expect</h2>
          <PendingChanges changes={adminChanges} viewerId={me.id} canApprove={false} hasPasskey={hasPasskey} />
        </section>
      )}
      <Investigations
        hasPasskey={hasPasskey}
        items={investigations.map((item) => ({ ...item, createdAt: item.createdAt.toISOString() }))}
        health={
          health && {
            ...health,
            checkedAt: health.checkedAt.toISOString(),
            lastOkAt: health.lastOkAt?.toISOString() ?? null,
          }
        }
      />
      <OverpaidRefunds
        hasPasskey={hasPasskey}
        refunds={overpaid.map((refund) => ({ ...refund, overpaidAt: refund.overpaidAt!.toISOString() }))}
      />
      <UnknownUpstreamCalls calls={unknownUpstream} />
      <div className="title-row">
        <h1>Pending approvals</h1>
        <QueueLive shownStamp={stamp} shownPending={pendingCount} />
      </div>
      <p className="muted">
        Each approval covers exactly the call shown and is re-checked against current data when you approve.
      </p>
      <QueueFilterForm filters={filters} agents={choices.agents} tools={choices.tools} />
      <ApprovalQueue
        items={cards}
        policy={policy}
        me={me.email}
        stepUp={stepUp}
        filtered={[
          filters.agentId,
          filters.tool,
          filters.minCents,
          filters.maxCents,
          filters.olderThanMinutes,
          filters.search,
        ].some((value) => value !== undefined)}
      />
      <p className="pager">
        {firstPage !== null && <Link href={`/approvals?${firstPage}`}>← First page</Link>}{" "}
        {nextPage !== null && <Link href={`/approvals?${nextPage}`}>Next page →</Link>}
      </p>
    </main>
  );
}
