"use client";

import { useRouter } from "next/navigation";
import { useEffect, useState, useTransition } from "react";
import { decideApprovalsAction } from "@/app/approvals/actions";
import type { DecisionResult } from "@/lib/approvals/decide";
import type { QueueItem } from "@/lib/approvals/queue";
import { formatMoney } from "@/lib/money";

// The server and the browser disagree on "now", so the seconds appear only once the page runs in the browser:
// the first render is the same on both (no hydration mismatch).
function TimeLeft({ expiresAt }: { expiresAt: string }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  if (now === null) return <time dateTime={expiresAt}>time left: counting</time>;
  const seconds = Math.max(0, Math.round((new Date(expiresAt).getTime() - now) / 1000));
  if (seconds === 0) return <span className="error">expired</span>;
  return <time dateTime={expiresAt} title={new Date(expiresAt).toLocaleString()}>{`${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s left`}</time>;
}

function resultText(result: DecisionResult): string {
  if (result.ok) return result.status === "approved" ? `approved: ${result.outcome.code}` : "denied";
  return result.message;
}

export function ApprovalQueue({ items }: { items: (Omit<QueueItem, "createdAt" | "expiresAt" | "decidedAt"> & { createdAt: string; expiresAt: string })[] }) {
  const router = useRouter();
  const [selected, setSelected] = useState<string[]>([]);
  const [notes, setNotes] = useState<Record<string, string>>({});
  const [results, setResults] = useState<DecisionResult[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();

  function decide(ids: string[], decision: "approve" | "deny", note?: string) {
    startTransition(async () => {
      setError(null);
      const response = await decideApprovalsAction({ ids, decision, note });
      if (!response.ok) {
        setError(response.message);
        return;
      }
      setResults(response.data);
      setSelected([]);
      router.refresh();
    });
  }

  const toggle = (id: string) => setSelected((current) => (current.includes(id) ? current.filter((other) => other !== id) : [...current, id]));

  return (
    <div>
      {error && <p className="error" role="alert">{error}</p>}
      {results.length > 0 && (
        <div className="card" data-testid="decision-results">
          <strong>Results</strong>
          <ul>
            {results.map((result) => (
              <li key={result.approvalId} className={result.ok ? "" : "error"} data-testid={`result-${result.approvalId}`}>
                <code>{result.approvalId}</code>: {resultText(result)}
              </li>
            ))}
          </ul>
        </div>
      )}
      {items.length === 0 ? (
        <p className="muted">No pending requests.</p>
      ) : (
        <p>
          <button type="button" disabled={pending || selected.length === 0} onClick={() => decide(selected, "approve")}>
            Approve selected ({selected.length})
          </button>{" "}
          <button type="button" className="danger" disabled={pending || selected.length === 0} onClick={() => decide(selected, "deny")}>
            Deny selected ({selected.length})
          </button>
        </p>
      )}
      {items.map((item) => {
        const { preview } = item;
        return (
          <section key={item.id} className="card" data-testid="approval-item" data-approval-id={item.id}>
            <label style={{ float: "right" }}>
              <input type="checkbox" checked={selected.includes(item.id)} onChange={() => toggle(item.id)} aria-label={`select ${item.id}`} /> select
            </label>
            <h2 style={{ marginTop: 0 }}>
              <code>{item.toolName}</code> on <code>{item.orderId}</code>: {formatMoney(preview.impact.amount_cents, preview.impact.currency)}
            </h2>
            <p className="muted">
              requested by {item.requestedBy} in conversation <code>{item.conversationId}</code> for customer <code>{preview.customer_id}</code> ·{" "}
              <TimeLeft expiresAt={item.expiresAt} />
            </p>
            <table>
              <tbody>
                <tr>
                  <th>Arguments</th>
                  <td>
                    <code data-testid="preview-arguments">
                      {Object.keys(preview.arguments)
                        .sort()
                        .map((key) => `${key}: ${JSON.stringify(preview.arguments[key])}`)
                        .join(" · ")}
                    </code>
                  </td>
                </tr>
                <tr>
                  <th>Order when checked</th>
                  <td data-testid="preview-order">
                    status {preview.order.status} · total {formatMoney(preview.order.total_cents, preview.order.currency)} · refunded{" "}
                    {formatMoney(preview.order.refunded_cents, preview.order.currency)} · refundable now{" "}
                    {formatMoney(preview.order.refundable_cents, preview.order.currency)}
                  </td>
                </tr>
                {preview.ceiling && (
                  <tr>
                    <th>Why approval</th>
                    <td data-testid="preview-ceiling">
                      {preview.ceiling.name === "agent_daily_ceiling_cents" ? "the agent's" : "the tenant's"} {preview.ceiling.window_hours}-hour ceiling:{" "}
                      {formatMoney(preview.ceiling.used_cents, preview.impact.currency)} executed without approval of{" "}
                      {formatMoney(preview.ceiling.limit_cents, preview.impact.currency)}, this call adds{" "}
                      {formatMoney(preview.impact.amount_cents, preview.impact.currency)}
                    </td>
                  </tr>
                )}
              </tbody>
            </table>
            <p>
              <input
                placeholder="Note (optional)"
                value={notes[item.id] ?? ""}
                maxLength={500}
                onChange={(event) => setNotes({ ...notes, [item.id]: event.target.value })}
                aria-label={`note for ${item.id}`}
                style={{ width: "50%" }}
              />{" "}
              <button type="button" className="primary" disabled={pending} onClick={() => decide([item.id], "approve", notes[item.id])}>
                Approve
              </button>{" "}
              <button type="button" className="danger" disabled={pending} onClick={() => decide([item.id], "deny", notes[item.id])}>
                Deny
              </button>
            </p>
          </section>
        );
      })}
    </div>
  );
}
