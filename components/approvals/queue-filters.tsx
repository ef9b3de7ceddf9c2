import type { QueueFilters } from "@/lib/approvals/desk/filters";

const AGES: [string, string][] = [
  ["", "any age"],
  ["5", "waiting 5 minutes or more"],
  ["30", "waiting 30 minutes or more"],
  ["120", "waiting 2 hours or more"],
];

const SORTS: [string, string][] = [
  ["oldest", "oldest first"],
  ["newest", "newest first"],
  ["expiring", "expiring soonest"],
  ["largest", "largest amount"],
];

/**
 * A plain GET form: filters live in the address, so a filtered queue can be shared and paged. On a phone all but the
 * search fold under "More filters" (open while one is set), so the first card is on the first screen; on a wider
 * screen they stand in one row.
 */
export function QueueFilterForm({
  filters,
  agents,
  tools,
}: {
  filters: QueueFilters;
  agents: { id: string; name: string; email: string }[];
  tools: string[];
}) {
  const refined = [
    filters.agentId,
    filters.tool,
    filters.minCents,
    filters.maxCents,
    filters.olderThanMinutes,
    filters.sort === "oldest" ? undefined : filters.sort,
  ].filter((value) => value !== undefined).length;
  return (
    <form className="filters" method="get" action="/approvals" role="search" aria-label="Filter the queue">
      <label>
        Search
        <input name="q" defaultValue={filters.search ?? ""} placeholder="order, customer, call or request id" />
      </label>
      <details className="more-filters" open={refined > 0}>
        <summary>More filters{refined > 0 ? ` (${refined} set)` : ""}</summary>
        <label>
          Agent
          <select name="agent" defaultValue={filters.agentId ?? ""}>
            <option value="">any agent</option>
            {agents.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name} ({agent.email})
              </option>
            ))}
          </select>
        </label>
        <label>
          Tool
          <select name="tool" defaultValue={filters.tool ?? ""}>
            <option value="">any tool</option>
            {tools.map((tool) => (
              <option key={tool} value={tool}>
                {tool.replace(/_/g, " ")}
              </option>
            ))}
          </select>
        </label>
        <AmountFilter label="Amount from" name="min" cents={filters.minCents} placeholder="0.00" />
        <AmountFilter label="Amount up to" name="max" cents={filters.maxCents} placeholder="1000.00" />
        <label>
          Age
          <select
            name="age"
            defaultValue={filters.olderThanMinutes !== undefined ? String(filters.olderThanMinutes) : ""}
          >
            {AGES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Sort
          <select name="sort" defaultValue={filters.sort ?? "oldest"}>
            {SORTS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </details>
      <button type="submit">Apply</button>
    </form>
  );
}

/** One end of the amount range, typed as money ("80.00"), empty when unset. */
function AmountFilter({
  label,
  name,
  cents,
  placeholder,
}: {
  label: string;
  name: string;
  cents: number | undefined;
  placeholder: string;
}) {
  return (
    <label>
      {label}
      <input
        name={name}
        inputMode="decimal"
        size={7}
        defaultValue={cents !== undefined ? (cents / 100).toFixed(2) : ""}
        placeholder={placeholder}
      />
    </label>
  );
}
