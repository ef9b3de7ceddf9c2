"use client";

import type { DiffLine } from "@/lib/line-diff";
import { argumentRows, claimWords, editDiffs, type ArgumentRow } from "@/lib/upstream/calls/card";
import type { UpstreamPreview } from "@/lib/upstream/calls/preview";
import type { CardProps } from "./card-item";
import { CardActions, CardWho } from "./card-who";

/**
 * A held call to an upstream server's tool, as its card shows it: the tool's description in full, every argument
 * under its schema's title and description (long text numbered line by line), an edit as a diff, the server and the
 * definition's hash the approval binds, and the annotations as the server's claim.
 */
export function UpstreamCard({
  item,
  preview,
  now,
  focused,
  selected,
  busy,
  onFocus,
  onToggle,
  onApprove,
  onDeny,
}: CardProps & { preview: UpstreamPreview }) {
  const expired = now !== null && new Date(item.expiresAt).getTime() <= now;
  const diffs = editDiffs(preview.arguments);
  const claims = claimWords(preview.annotations_claimed);
  const title = preview.title ?? preview.upstream_tool;
  return (
    <section
      id={`request-${item.id}`}
      className={`card approval${focused ? " focused" : ""}`}
      data-testid="approval-item"
      data-approval-id={item.id}
      data-upstream-tool={preview.tool}
      tabIndex={-1}
      onFocus={onFocus}
      aria-label={`${preview.tool} call`}
    >
      <header className="card-head">
        <h2 data-testid="card-title">
          {title} <span className="muted">on {preview.server}</span>
        </h2>
        <label className="select">
          <input type="checkbox" checked={selected} onChange={onToggle} aria-label={`select ${preview.tool} call`} />{" "}
          select
        </label>
      </header>
      <CardWho item={item} customerId={preview.customer_id} now={now} />
      <div className="why" data-testid="card-why">
        <strong>Held because</strong>{" "}
        <ul>
          {preview.held.map((reason, index) => (
            <li key={index} data-rule={reason.rule}>
              {reason.reason}
            </li>
          ))}
        </ul>
      </div>
      <dl className="facts">
        <dt>Tool</dt>
        <dd data-testid="upstream-tool">
          <code>{preview.tool}</code>
          {preview.description && <span className="line upstream-text">{preview.description}</span>}
        </dd>
        {argumentRows(preview).map((row) => (
          <ArgumentFact key={row.key} row={row} />
        ))}
        {diffs.map((diff) => (
          <DiffFact key={diff.where} where={diff.where} lines={diff.lines} />
        ))}
        <dt>Server</dt>
        <dd data-testid="upstream-server">
          {preview.server} · definition{" "}
          <code title={preview.definition_hash}>{preview.definition_hash.slice(0, 16)}</code>{" "}
          <span className="muted">(approval binds this definition; a changed one cannot be approved)</span>
        </dd>
        <dt>The server claims</dt>
        <dd data-testid="upstream-claims">
          {claims.length === 0 ? "nothing about what it does" : `it ${claims.join(", ")}`}{" "}
          <span className="muted">(the server&apos;s own claim, not checked by toolgate)</span>
        </dd>
      </dl>
      <CardActions
        item={item}
        approveDisabled={busy || expired}
        denyDisabled={busy || expired}
        onApprove={onApprove}
        onDeny={onDeny}
      />
    </section>
  );
}

function ArgumentFact({ row }: { row: ArgumentRow }) {
  return (
    <>
      <dt>{row.label}</dt>
      <dd data-testid={`upstream-argument-${row.key}`}>
        {row.description && <span className="line muted small">{row.description}</span>}
        {row.numbered ? (
          <ol className="numbered">
            {row.lines.map((line, index) => (
              <li key={index}>
                <code>{line}</code>
              </li>
            ))}
          </ol>
        ) : (
          <code>{row.lines[0]}</code>
        )}
      </dd>
    </>
  );
}

const MARK: Record<DiffLine["kind"], string> = { same: " ", removed: "-", added: "+" };

function DiffFact({ where, lines }: { where: string; lines: DiffLine[] }) {
  return (
    <>
      <dt>Change ({where})</dt>
      <dd data-testid="upstream-diff">
        <pre className="diff">
          {lines.map((line, index) => (
            <span key={index} className={`diff-${line.kind}`}>
              {MARK[line.kind]} {line.text}
              {"\n"}
            </span>
          ))}
        </pre>
      </dd>
    </>
  );
}
