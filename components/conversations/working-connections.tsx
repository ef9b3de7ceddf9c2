"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useId, useTransition } from "react";
import { TimeAgo } from "@/components/ui/time-ago";
import { FormMessages } from "@/components/ui/field";
import { CustomerSearchField, useCustomerSearch } from "./customer-search";
import { workOnCustomerAction } from "@/lib/conversations/actions";
import type { CustomerChoice } from "@/lib/conversations/console";
import type { WorkingConnection } from "@/lib/conversations/working-on";
import { BusyButton } from "@/components/ui/busy-button";

/**
 * The person's MCP connections (Claude, ChatGPT, VS Code…), each with the customer it works on and a search to
 * switch: the one place a customer is chosen for a connection (issue 40). Meant to stay open beside the chat.
 */
export function WorkingConnections({
  connections,
  firstCustomers,
  url,
}: {
  connections: WorkingConnection[];
  firstCustomers: CustomerChoice[];
  /** The MCP address a person adds to their assistant: the same for every customer. */
  url: string;
}) {
  return (
    <main id="main">
      <h1>Your connections</h1>
      {connections.length === 0 ? (
        <section className="card" data-testid="connections-empty">
          <p>
            No assistant is connected yet. Add this address to your assistant as a remote MCP server (in Claude:
            Settings → Connectors → Add custom connector; in VS Code: MCP: Add Server → HTTP), sign in to toolgate when
            it asks, and allow it:
          </p>
          <p>
            <code data-testid="connections-url">{url}</code>
          </p>
          <p className="muted">
            Claude and ChatGPT reach only a public https address; on your own machine, VS Code works with this one. Then
            come back here to choose the customer it works on.
          </p>
        </section>
      ) : (
        <>
          <p className="muted">
            Each assistant you connected works on one customer at a time. Choose the customer here: the assistant cannot
            choose or change it, and its next call runs for the customer you pick. The address it uses is{" "}
            <code>{url}</code>, the same for every customer.
          </p>
          {connections.map((connection) => (
            <ConnectionCard key={connection.id} connection={connection} firstCustomers={firstCustomers} />
          ))}
        </>
      )}
    </main>
  );
}

function ConnectionCard({
  connection,
  firstCustomers,
}: {
  connection: WorkingConnection;
  firstCustomers: CustomerChoice[];
}) {
  const router = useRouter();
  const id = useId();
  const { query, setQuery, shown, error, setError } = useCustomerSearch(firstCustomers);
  const [pending, startTransition] = useTransition();

  function switchTo(customer: CustomerChoice) {
    startTransition(async () => {
      setError(null);
      const response = await workOnCustomerAction({ grant_id: connection.id, customer_id: customer.id });
      if (!response.ok) setError(response.message);
      else router.refresh();
    });
  }

  return (
    <section className="card" aria-labelledby={`${id}-title`} data-testid="connection" data-grant-id={connection.id}>
      <h2 id={`${id}-title`} style={{ marginTop: 0 }}>
        {connection.clientName}
      </h2>
      <p data-testid="working-on">
        {connection.customerEmail ? (
          <>
            Working on <strong>{connection.customerEmail}</strong> (
            <Link href={`/conversations/${connection.conversationId}`}>its conversation</Link>)
          </>
        ) : (
          <strong>No customer chosen yet: the assistant&apos;s calls wait for your choice.</strong>
        )}
      </p>
      <p className="muted">
        Connected <TimeAgo iso={new Date(connection.createdAt).toISOString()} />
        {connection.lastUsedAt && (
          <>
            , last used <TimeAgo iso={new Date(connection.lastUsedAt).toISOString()} />
          </>
        )}{" "}
        · may use {connection.scopes.join(", ")}
      </p>
      <CustomerSearchField label="Switch to a customer" query={query} setQuery={setQuery} controls={`${id}-choices`} />
      <ul
        id={`${id}-choices`}
        className="choices"
        aria-live="polite"
        data-testid="switch-choices"
        style={{ listStyle: "none", paddingLeft: 0 }}
      >
        {shown === null ? (
          <li className="muted">Searching…</li>
        ) : shown.choices.length === 0 ? (
          <li className="muted">No customer matches “{shown.query}”. Try part of their email.</li>
        ) : (
          shown.choices.map((choice) => (
            <li key={choice.id}>
              <BusyButton
                type="button"
                busy={pending}
                disabled={choice.id === connection.customerId}
                onClick={() => switchTo(choice)}
              >
                {choice.id === connection.customerId ? `Working on ${choice.email}` : `Work on ${choice.email}`}
              </BusyButton>
            </li>
          ))
        )}
      </ul>
      <FormMessages error={error} />
    </section>
  );
}
