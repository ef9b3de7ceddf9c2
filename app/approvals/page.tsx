import { ApprovalDesk } from "@/components/approvals/approval-desk";
import { pendingChanges } from "@/lib/admin/changes/two-admin";
import { cardFacts, deskPolicy, queueChoices } from "@/lib/approvals/desk/cards";
import { parseQueueFilters, queueSearchParams } from "@/lib/approvals/desk/filters";
import { formatQueueCursor, pendingQueue, renderedQueueStamp } from "@/lib/approvals/desk/queue";
import { stepUpWayOf } from "@/lib/auth/step-up/step-up";
import { requireSession } from "@/lib/auth/guards";
import { overpaidRefunds } from "@/lib/payments/reconcile/overpaid";
import { reconcileHealth, refundsToInvestigate } from "@/lib/payments/reconcile/reconcile";
import { unknownCalls } from "@/lib/upstream/calls/resolve";

export const metadata = { title: "Pending approvals" };

export const dynamic = "force-dynamic";

const PAGE = 50;

export default async function ApprovalsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const filters = parseQueueFilters(params);
  const cursor = typeof params.after === "string" ? params.after : undefined;
  // A link to one card (a chat notice's button) leads back to it after sign-in.
  const query = queueSearchParams(filters, cursor ?? null);
  const { user, sessionId } = await requireSession(["SUPERVISOR"], query ? `/approvals?${query}` : "/approvals");
  // Taken before the cards: a change in between makes the live stream's next stamp differ, so the desk refreshes.
  const shown = await renderedQueueStamp(user.tenantId);
  const [items, investigations, overpaid, health, policy, choices, stepUp, adminChanges, lost] = await Promise.all([
    pendingQueue(user.tenantId, { cursor, limit: PAGE, filters }),
    refundsToInvestigate(user.tenantId),
    overpaidRefunds(user.tenantId),
    reconcileHealth(),
    deskPolicy(user.tenantId),
    queueChoices(user.tenantId),
    stepUpWayOf(user.id, sessionId),
    pendingChanges(user.tenantId),
    unknownCalls(user.tenantId),
  ]);
  const facts = await cardFacts(user.tenantId, items);
  return (
    <ApprovalDesk
      me={{ id: user.id, email: user.email }}
      stamp={shown.stamp}
      pendingCount={shown.pending}
      items={items}
      facts={facts}
      filters={filters}
      choices={choices}
      policy={policy}
      stepUp={stepUp}
      investigations={investigations}
      overpaid={overpaid}
      health={health}
      adminChanges={adminChanges}
      unknownUpstream={lost.map((call) => ({ ...call, sentAt: call.sentAt?.toISOString() ?? null }))}
      firstPage={cursor ? queueSearchParams(filters, null) : null}
      nextPage={
        items.length === PAGE
          ? queueSearchParams(filters, formatQueueCursor(items[items.length - 1], filters.sort))
          : null
      }
    />
  );
}
