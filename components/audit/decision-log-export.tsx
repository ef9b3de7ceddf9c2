const dayFromNow = (days: number) => new Date(Date.now() + days * 24 * 3600_000).toISOString().slice(0, 10);

/** A plain GET form to the export route: the browser downloads the file, no script needed. */
export function DecisionLogExport({ tenantId }: { tenantId: string }) {
  const [monthAgo, today, tomorrow] = [dayFromNow(-30), dayFromNow(0), dayFromNow(1)];
  return (
    <form
      className="card"
      method="get"
      action={`/api/tenants/${encodeURIComponent(tenantId)}/decision-log`}
      data-testid="decision-log-export"
    >
      <strong>Export the decision log</strong>
      <p className="muted">
        Every decision made on or after the From day and before the To day, each row with its own hash for checking
        against the seals.
      </p>
      <label>
        From <input type="date" name="from" defaultValue={monthAgo} max={today} required />
      </label>{" "}
      <label>
        To <input type="date" name="to" defaultValue={tomorrow} required />
      </label>{" "}
      <label>
        as{" "}
        <select name="format" defaultValue="csv">
          <option value="csv">CSV</option>
          <option value="jsonl">JSON Lines</option>
        </select>
      </label>{" "}
      <button type="submit">Download</button>
    </form>
  );
}
