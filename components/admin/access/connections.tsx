"use client";

import { useState, useTransition } from "react";
import { TimeAgo } from "@/components/ui/time-ago";
import { setSelfRegistrationAction } from "@/lib/admin/access/actions";
import { revokeConnectionAction } from "@/lib/oauth/consent/actions";
import { useStepUp } from "@/components/step-up/step-up-field";
import { Table } from "@/components/ui/table";
import { FormMessages } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";

export interface Connection {
  id: string;
  agentName: string;
  agentEmail: string;
  clientId: string;
  clientName: string;
  clientKind: "cimd" | "dcr";
  redirectUri: string;
  scopes: string[];
  grantedBy: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/**
 * The tenant's OAuth connections per agent (clients that act as an agent), with last use and a revoke button.
 * Allowing self-registered clients asks for the admin's step-up and waits for a second admin (or the delay).
 */
export function Connections({
  connections,
  dcrEnabled,
  hasPasskey,
}: {
  connections: Connection[];
  dcrEnabled: boolean;
  hasPasskey: boolean;
}) {
  const stepUp = useStepUp(hasPasskey);
  const [error, setError] = useState<string | null>(null);
  const [held, setHeld] = useState<string | null>(null);
  const [allowed, setAllowed] = useState(dcrEnabled);
  const [pending, startTransition] = useTransition();
  const run = (action: () => Promise<{ ok: boolean; message?: string }>) =>
    startTransition(async () => {
      const response = await action();
      setError(response.ok ? null : (response.message ?? "That did not work; try again."));
    });

  return (
    <div>
      <FormMessages error={error} notice={held} noticeTestId="self-registration-held" />
      {stepUp.field}
      <label>
        <input
          type="checkbox"
          checked={allowed}
          disabled={pending}
          onChange={(event) => {
            const enabled = event.target.checked;
            setAllowed(enabled);
            startTransition(async () => {
              const response = enabled
                ? await stepUp.run({ kind: "admin.self-registration" }, (proofId) =>
                    setSelfRegistrationAction({ enabled, proofId }),
                  )
                : await setSelfRegistrationAction({ enabled });
              // A held change has not applied yet: the box shows what is in force.
              setAllowed(response.ok && !response.data.held ? enabled : !enabled);
              setHeld(response.ok ? response.data.held : null);
              setError(response.ok ? null : response.message);
            });
          }}
        />{" "}
        Allow clients that register themselves (Cursor, mcp-remote); their names are not verified
      </label>
      {connections.length === 0 ? (
        <p className="muted">
          No client is connected yet. When an agent connects Claude, ChatGPT, VS Code or Cursor, it is listed here.
        </p>
      ) : (
        <Table
          rows={connections}
          rowKey={(connection) => connection.id}
          rowProps={(connection) => ({ "data-testid": `connection-${connection.id}` })}
          columns={[
            {
              label: "Agent",
              cell: (connection) => (
                <>
                  {connection.agentName}
                  <div className="muted small">{connection.agentEmail}</div>
                </>
              ),
            },
            {
              label: "Client",
              cell: (connection) => (
                <>
                  {connection.clientName}
                  <div className="muted small" style={{ overflowWrap: "anywhere" }}>
                    {connection.clientKind === "cimd" ? connection.clientId : "registered itself"} · returns to{" "}
                    {connection.redirectUri}
                  </div>
                  <div className="muted small">
                    granted by {connection.grantedBy} <TimeAgo iso={connection.createdAt} />
                  </div>
                </>
              ),
            },
            {
              label: "May",
              cell: (connection) => <span className="small">{connection.scopes.join(", ")}</span>,
            },
            {
              label: "Last used",
              cell: (connection) =>
                connection.lastUsedAt ? <TimeAgo iso={connection.lastUsedAt} /> : <span className="muted">never</span>,
            },
            {
              label: "Access",
              cell: (connection) =>
                connection.revokedAt ? (
                  <span className="muted">
                    revoked <TimeAgo iso={connection.revokedAt} />
                  </span>
                ) : (
                  <BusyButton
                    type="button"
                    busy={pending}
                    onClick={() => run(() => revokeConnectionAction({ grantId: connection.id }))}
                  >
                    Revoke {connection.clientName} for {connection.agentName}
                  </BusyButton>
                ),
            },
          ]}
        />
      )}
    </div>
  );
}
