import type { QueueFilters } from "@/lib/approvals/filters";

const AGES: [string, string][] = [
  ["", "any age"],
  ["5", "waiting 5 min or more"],
  ["30", "waiting 30 min or more"],
  ["120", "waiting 2 h or more"],
];

const SORTS: [string, string][] = [
  ["oldest", "oldest first"],
  ["newest", "newest first"],
  ["expiring", "expiring soonest"],
  ["largest", "largest amount"],
];

/** A plain GET form: filters live in the address, so a filtered queue can be shared and paged. */
export function QueueFilterForm({
  filters,
  agents,
  tools,
}: {
  filters: QueueFilters;
  agents: { id: string; name: string; email: string }[];
  tools: string[];
}) {
  return (
    <form className="filters" method="get" action="/approvals" role="search" aria-label="Filter the queue">
      <label>
        Search
        <input name="q" defaultValue={filters.search ?? ""} placeholder="order, customer, call or request id" />
      </label>
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
      <label>
        From
        <input
          name="min"
          inputMode="decimal"
          size={7}
          defaultValue={filters.minCents !== undefined ? (filters.minCents / 100).toFixed(2) : ""}
          placeholder="0.00"
        />
      </label>
      <label>
        To
        <input
          name="max"
          inputMode="decimal"
          size={7}
          defaultValue={filters.maxCents !== undefined ? (filters.maxCents / 100).toFixed(2) : ""}
          placeholder="1000.00"
        />
      </label>
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
      <button type="submit">Apply</button>
    </form>
  );
}
