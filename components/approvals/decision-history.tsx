import Link from "next/link";
import { DecisionLogExport } from "@/components/audit/decision-log-export";
import { TimeAgo } from "@/components/ui/time-ago";
import { formatDuration } from "@/components/ui/time-words";
import { HISTORY_OUTCOMES, type HistoryFilter } from "@/lib/approvals/desk/filters";
import type { HistoryPage, historyPeople } from "@/lib/approvals/desk/history";
import { requestPhrase } from "@/lib/approvals/words";
import { outcomeTitleBeside } from "@/lib/calls/words";
import { Table } from "@/components/ui/table";

const OUTCOME_WORDS: Record<string, string> = {
  approved: "approved",
  denied: "denied",
  failed: "stopped by re-check",
  expired: "expired",
  withdrawn: "withdrawn by the agent",
};

/** The decision history: the log export, filters, one page of decisions (or why there are none) and older ones. */
export function DecisionHistory({
  tenantId,
  filter,
  page,
  people,
}: {
  tenantId: string;
  filter: HistoryFilter;
  page: HistoryPage;
  people: Awaited<ReturnType<typeof historyPeople>>;
}) {
  const { before: _before, ...kept } = filter;
  const filtered = Object.values(kept).some(Boolean);
  const nextHref = page.next
    ? `/approvals/history?${new URLSearchParams({ ...(Object.fromEntries(Object.entries(kept).filter(([, value]) => value)) as Record<string, string>), before: page.next })}`
    : null;
  return (
    <main id="main">
      <h1>Decision history</h1>
      <DecisionLogExport tenantId={tenantId} />
      <form className="filters card" method="get" role="search" aria-label="Filter the history">
        <label>
          Search
          <input
            name="q"
            type="search"
            defaultValue={filter.q ?? ""}
            placeholder="order, call or request id, or email"
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
        <PersonFilter
          label="Decided by"
          name="decider"
          anyone="anyone"
          people={people.deciders}
          value={filter.decider}
        />
        <PersonFilter
          label="Requested by"
          name="agent"
          anyone="any agent"
          people={people.agents}
          value={filter.agent}
        />
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
        <Table
          rows={page.items}
          rowKey={(item) => item.id}
          rowProps={(item) => ({ "data-testid": "history-item", "data-approval-id": item.id })}
          columns={[
            {
              label: "Decided",
              cell: (item) => <TimeAgo iso={item.decidedAt.toISOString()} />,
            },
            {
              label: "Call",
              cell: (item) => (
                <>
                  <Link href={`/calls/${item.originCallId}`} data-testid="history-timeline">
                    {requestPhrase({ ...item, amountCents: item.impactCents })}
                  </Link>
                  <div className="muted">
                    for {item.customerEmail ?? "—"}, requested by{" "}
                    <span title={item.requestedBy ?? undefined}>{item.requestedByName ?? item.requestedBy ?? "—"}</span>
                  </div>
                </>
              ),
            },
            {
              label: "Outcome",
              cell: (item) => {
                const status = OUTCOME_WORDS[item.status] ?? item.status;
                const result = item.resultCode ? outcomeTitleBeside(item.resultCode, status) : null;
                return (
                  <>
                    <span data-testid="history-status">{status}</span>
                    {item.resultCode && (
                      <div className="muted">
                        {result ? `${result} ` : null}
                        <code>{item.resultCode}</code>
                      </div>
                    )}
                  </>
                );
              },
            },
            {
              label: "Decided by",
              cell: (item) =>
                item.decidedBy ? (
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
                ),
            },
            {
              label: "Latency",
              testId: "history-latency",
              cell: (item) => formatDuration(item.decidedAt.getTime() - item.createdAt.getTime()),
            },
            {
              label: "Why denied",
              cell: (item) => item.note ?? "",
            },
          ]}
        />
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

/** A filter on one person, named before the email; `anyone` is the choice that filters nothing. */
function PersonFilter({
  label,
  name,
  anyone,
  people,
  value,
}: {
  label: string;
  name: string;
  anyone: string;
  people: { id: string; name: string; email: string }[];
  value: string | null | undefined;
}) {
  return (
    <label>
      {label}
      <select name={name} defaultValue={value ?? ""}>
        <option value="">{anyone}</option>
        {people.map((person) => (
          <option key={person.id} value={person.id}>
            {person.name} ({person.email})
          </option>
        ))}
      </select>
    </label>
  );
}
