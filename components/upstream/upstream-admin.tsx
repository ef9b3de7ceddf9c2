"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { addUpstreamServerAction, reviewUpstreamToolAction, syncUpstreamServerAction } from "@/lib/upstream/actions";
import type { Verdict } from "@/lib/upstream/servers/definition";
import type { ToolReview, upstreamOverview } from "@/lib/upstream/servers/overview";
import { TimeAgo } from "@/components/ui/time-ago";
import { Field } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";

type Overview = Awaited<ReturnType<typeof upstreamOverview>>;

const STATUS_WORDS: Record<ToolReview["status"], string> = {
  "pending-review": "new: waiting for your review",
  reviewed: "reviewed",
  quarantined: "changed upstream: quarantined until you review the change",
};

const VERDICT_WORDS: Record<Verdict, string> = {
  allow: "allow: runs without a person",
  hold: "hold: each call waits for a supervisor",
  deny: "deny: never runs",
};

/**
 * The MCP servers whose tools toolgate guards: add a remote one, list its tools again, and review each tool's
 * definition in full (a changed one as a diff against what was reviewed) with allow, hold or deny. Local (stdio)
 * servers come from the operator's UPSTREAM_SERVERS_FILE and cannot be added here.
 */
export function UpstreamAdmin({ overview }: { overview: Overview }) {
  const router = useRouter();
  const [message, setMessage] = useState<{ error: boolean; text: string } | null>(null);
  const [pending, startTransition] = useTransition();
  const run = (work: () => Promise<{ ok: boolean; message?: string }>, done: string) =>
    startTransition(async () => {
      const result = await work();
      setMessage(result.ok ? { error: false, text: done } : { error: true, text: result.message ?? "not done" });
      if (result.ok) router.refresh();
    });

  return (
    <main id="main">
      <h1>MCP servers</h1>
      <p className="muted">
        Agents see an upstream tool only once you have reviewed its definition, and only in conversations opened with
        it. A definition that changes upstream is taken away from agents until you review the change.
      </p>
      {message && (
        <p role="status" className={message.error ? "error" : "ok"}>
          {message.text}
        </p>
      )}
      <AddServer
        busy={pending}
        onAdd={(input) => run(() => addUpstreamServerAction(input), `${input.name} added: review its tools below.`)}
      />
      <h2>Servers</h2>
      {overview.servers.length === 0 ? (
        <p>No servers yet. Add a remote one above, or have the operator list a local one in UPSTREAM_SERVERS_FILE.</p>
      ) : (
        <ul data-testid="upstream-servers">
          {overview.servers.map((server) => (
            <li key={server.id}>
              <strong>{server.name}</strong> ·{" "}
              {server.transport === "stdio" ? "local (operator's file)" : <code>{server.url}</code>}
              {server.hasSecret ? " · with a secret header" : ""} · listed{" "}
              {server.syncedAt ? <TimeAgo iso={server.syncedAt} /> : "never"}{" "}
              {server.listingRefused && (
                <span className="error" data-testid="listing-refused">
                  · its last listing was not taken: {server.listingRefused}{" "}
                </span>
              )}
              <BusyButton
                type="button"
                busy={pending}
                onClick={() =>
                  run(() => syncUpstreamServerAction({ name: server.name }), `${server.name} listed again.`)
                }
              >
                List its tools again
              </BusyButton>
            </li>
          ))}
        </ul>
      )}
      <h2>Tools</h2>
      {overview.tools.length === 0 && <p>No tools yet: they appear here once a server is listed.</p>}
      {[...overview.tools].sort(needsReviewFirst).map((tool) => (
        <ToolCard
          key={tool.id}
          tool={tool}
          busy={pending}
          onReview={(verdict) =>
            run(
              () => reviewUpstreamToolAction({ tool_id: tool.id, definition_hash: tool.definitionHash, verdict }),
              `${tool.server}__${tool.name}: reviewed, ${verdict}.`,
            )
          }
        />
      ))}
    </main>
  );
}

/** Tools waiting for a review (changed ones first) before reviewed ones; by name within each. */
const RANK: Record<ToolReview["status"], number> = { quarantined: 0, "pending-review": 1, reviewed: 2 };
const needsReviewFirst = (a: ToolReview, b: ToolReview) =>
  RANK[a.status] - RANK[b.status] || `${a.server}__${a.name}`.localeCompare(`${b.server}__${b.name}`);

function AddServer({
  busy,
  onAdd,
}: {
  busy: boolean;
  onAdd(input: { name: string; url: string; header_name?: string; secret?: string }): void;
}) {
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [headerName, setHeaderName] = useState("Authorization");
  const [secret, setSecret] = useState("");
  return (
    <form
      className="card"
      onSubmit={(event) => {
        event.preventDefault();
        onAdd(secret ? { name, url, header_name: headerName, secret } : { name, url });
        setSecret("");
      }}
    >
      <h2>Add a remote server (Streamable HTTP)</h2>
      <p>
        <label>
          Name (its tools appear as <code>name__tool</code>; lowercase letters, digits, hyphens)
          <br />
          <input name="name" value={name} onChange={(event) => setName(event.target.value)} required maxLength={30} />
        </label>
      </p>
      <Field
        label="URL"
        name="url"
        type="url"
        value={url}
        onChange={(event) => setUrl(event.target.value)}
        required
        style={{ width: "100%" }}
      />
      <p>
        <label>
          Header for the secret (<code>Authorization</code> sends it as a bearer token)
          <br />
          <input name="headerName" value={headerName} onChange={(event) => setHeaderName(event.target.value)} />
        </label>
      </p>
      <p>
        <label>
          Secret (stored encrypted, never shown again; leave empty for none)
          <br />
          <input
            name="secret"
            type="password"
            autoComplete="off"
            value={secret}
            onChange={(event) => setSecret(event.target.value)}
          />
        </label>
      </p>
      <p className="actions">
        <BusyButton type="submit" className="primary" busy={busy}>
          Add and list its tools
        </BusyButton>
      </p>
    </form>
  );
}

function ToolCard({ tool, busy, onReview }: { tool: ToolReview; busy: boolean; onReview(verdict: Verdict): void }) {
  const [verdict, setVerdict] = useState<Verdict>(tool.suggested);
  return (
    <section className="card" data-testid="upstream-tool" data-tool={`${tool.server}__${tool.name}`}>
      <h3>
        <code>
          {tool.server}__{tool.name}
        </code>{" "}
        <span className={tool.status === "reviewed" ? "muted" : "warn"}>{STATUS_WORDS[tool.status]}</span>
      </h3>
      {tool.status === "reviewed" && <p>Verdict: {VERDICT_WORDS[tool.verdict]}</p>}
      <dl className="facts">
        {tool.definition.title && (
          <>
            <dt>Title</dt>
            <dd>{tool.definition.title}</dd>
          </>
        )}
        <dt>Description</dt>
        <dd className="upstream-text" data-testid="upstream-description">
          {tool.definition.description ?? "(none)"}
        </dd>
        <dt>The server claims</dt>
        <dd>
          {tool.claims.length === 0 ? "nothing" : `it ${tool.claims.join(", ")}`}{" "}
          <span className="muted">(its own claim, not checked)</span>
        </dd>
        <dt>Input schema</dt>
        <dd>
          <details open={tool.status !== "reviewed"}>
            <summary>what a call may send</summary>
            <pre className="diff">{JSON.stringify(tool.definition.inputSchema, null, 2)}</pre>
          </details>
        </dd>
        {tool.schemaProblem && (
          <>
            <dt className="warn">Cannot be checked</dt>
            <dd data-testid="upstream-schema-problem">
              toolgate cannot check calls against this input schema: {tool.schemaProblem}. No call to this tool could be
              sent, so it can only be denied until the server&apos;s owner changes the schema.
            </dd>
          </>
        )}
        {tool.change && (
          <>
            <dt className="warn">Changed since reviewed</dt>
            <dd data-testid="upstream-change">
              <pre className="diff">
                {tool.change.map((line, index) => (
                  <span key={index} className={`diff-${line.kind}`}>
                    {line.kind === "removed" ? "-" : line.kind === "added" ? "+" : " "} {line.text}
                    {"\n"}
                  </span>
                ))}
              </pre>
            </dd>
          </>
        )}
        <dt>Definition</dt>
        <dd>
          <code title={tool.definitionHash}>{tool.definitionHash.slice(0, 16)}</code>
        </dd>
      </dl>
      <p className="actions">
        <label>
          Verdict{" "}
          <select value={verdict} onChange={(event) => setVerdict(event.target.value as Verdict)}>
            {(Object.keys(VERDICT_WORDS) as Verdict[]).map((choice) => (
              <option key={choice} value={choice} disabled={tool.schemaProblem !== null && choice !== "deny"}>
                {VERDICT_WORDS[choice]}
              </option>
            ))}
          </select>
        </label>
        <BusyButton type="button" className="primary" busy={busy} onClick={() => onReview(verdict)}>
          {tool.status === "reviewed" ? "Save the verdict" : "Review this definition"}
        </BusyButton>
      </p>
    </section>
  );
}
