import Link from "next/link";
import { DecisionLogExport } from "@/components/audit/decision-log-export";
import { TimeAgo } from "@/components/ui/time-ago";
import { callSummary, formatDuration } from "@/components/ui/words";
import { HISTORY_OUTCOMES, HistoryFilterSchema } from "@/lib/approvals/filters";
import { decisionHistory, historyPeople } from "@/lib/approvals/history";
import { requireRole } from "@/lib/auth/guards";
import { outcomeTitle } from "@/lib/calls/words";

export const dynamic = "force-dynamic";

const OUTCOME_WORDS: Record<string, string> = {
  approved: "approved",
  denied: "denied",
  failed: "stopped by re-check",
  expired: "expired",
  withdrawn: "withdrawn by the agent",
};

type Params = Record<string, string | string[] | undefined>;

export default async function ApprovalHistoryPage({ searchParams }: { searchParams: Promise<Params> }) {
  const user = await requireRole(["SUPERVISOR"], "/approvals/history");
  const raw = await searchParams;
  const filter = HistoryFilterSchema.parse(
    Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, Array.isArray(value) ? value[0] : value])),
  );
  const [page, people] = await Promise.all([decisionHistory(user.tenantId, filter), historyPeople(user.tenantId)]);
  const { before: _before, ...kept } = filter;
  const filtered = Object.values(kept).some(Boolean);
  const nextHref = page.next
    ? `/approvals/history?${new URLSearchParams({ ...(Object.fromEntries(Object.entries(kept).filter(([, value]) => value)) as Record<string, string>), before: page.next })}`
    : null;
  return (
    <main>
      <h1>Decision history</h1>
      <DecisionLogExport tenantId={user.tenantId} />
      <form className="filters card" method="get" role="search" aria-label="Filter the history">
        <label>
          Search
          <input
            name="q"
            type="search"
            defaultValue={filter.q ?? ""}
            placeholder="order, call or request id, customer email"
            size={30}
          />
        </label>
        <label>
          Outcome
          <select name="outcome" defaultValue={filter.outcome ?? ""}>
            <option value="">any</option>
            {HISTORY_OUTCOMES.map((outcome) => (
              <option key={outcome} value={outcome}>
                {OUTCOME_WORDS[outcome]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Decided by
          <select name="decider" defaultValue={filter.decider ?? ""}>
            <option value="">anyone</option>
            {people.deciders.map((person) => (
              <option key={person.id} value={person.id}>
                {person.name} ({person.email})
              </option>
            ))}
          </select>
        </label>
        <label>
          Requested by
          <select name="agent" defaultValue={filter.agent ?? ""}>
            <option value="">any agent</option>
            {people.agents.map((person) => (
              <option key={person.id} value={person.id}>
                {person.name} ({person.email})
              </option>
            ))}
          </select>
        </label>
        <label>
          Decided from
          <input name="from" type="date" defaultValue={filter.from ?? ""} />
        </label>
        <label>
          to
          <input name="to" type="date" defaultValue={filter.to ?? ""} />
        </label>
        <div className="actions">
          <button type="submit" className="primary">
            Filter
          </button>
          {filtered && <Link href="/approvals/history">Clear filters</Link>}
        </div>
      </form>
      {page.items.length === 0 ? (
        <p className="muted" data-testid="history-empty">
          {filtered
            ? "No decision matches these filters."
            : "No decisions yet. Requests appear here once a supervisor approves or denies them, or they expire."}
        </p>
      ) : (
        <table className="stack">
          <thead>
            <tr>
              <th>Decided</th>
              <th>Call</th>
              <th>Outcome</th>
              <th>Decided by</th>
              <th>Latency</th>
              <th>Note</th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((item) => (
              <tr key={item.id} data-testid="history-item" data-approval-id={item.id}>
                <td data-label="Decided">
                  <TimeAgo iso={item.decidedAt.toISOString()} />
                </td>
                <td data-label="Call">
                  <Link href={`/calls/${item.originCallId}`} data-testid="history-timeline">
                    {callSummary(item)}
                  </Link>
                  <div className="muted">
                    for {item.customerEmail ?? "—"}, requested by{" "}
                    <span title={item.requestedBy ?? undefined}>{item.requestedByName ?? item.requestedBy ?? "—"}</span>
                  </div>
                </td>
                <td data-label="Outcome">
                  <span data-testid="history-status">{OUTCOME_WORDS[item.status] ?? item.status}</span>
                  {item.resultCode && (
                    <div className="muted">
                      {outcomeTitle(item.resultCode)} <code>{item.resultCode}</code>
                    </div>
                  )}
                </td>
                <td data-label="Decided by">
                  {item.decidedBy ? (
                    <>
                      {item.decidedByName ?? item.decidedBy}
                      <div className="muted">{item.decidedBy}</div>
                    </>
                  ) : item.status === "expired" ? (
                    "nobody (expired)"
                  ) : item.status === "withdrawn" ? (
                    "nobody (withdrawn by the agent)"
                  ) : (
                    "—"
                  )}
                </td>
                <td data-label="Latency" data-testid="history-latency">
                  {formatDuration(item.decidedAt.getTime() - item.createdAt.getTime())}
                </td>
                <td data-label="Note">{item.note ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {nextHref && (
        <p>
          <Link href={nextHref} data-testid="history-older">
            Older decisions →
          </Link>
        </p>
      )}
    </main>
  );
}
