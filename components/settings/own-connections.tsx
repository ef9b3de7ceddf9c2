"use client";

import { useState, useTransition } from "react";
import { TimeAgo } from "@/components/ui/time-ago";
import { revokeOwnConnectionAction } from "@/lib/oauth/consent/actions";
import { FormMessages } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";

export interface OwnConnection {
  id: string;
  clientId: string;
  clientName: string;
  clientKind: "cimd" | "dcr";
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** The clients that act as this person (OAuth connections), each with what it may do and a revoke button. */
export function OwnConnections({ connections }: { connections: OwnConnection[] }) {
  const [error, setError] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();
  const revoke = (grantId: string) =>
    startTransition(async () => {
      const response = await revokeOwnConnectionAction({ grantId });
      setError(response.ok ? null : response.message);
    });

  return (
    <section className="card" aria-labelledby="connections-title">
      <h2 id="connections-title" style={{ marginTop: 0 }}>
        Connected clients
      </h2>
      <FormMessages error={error} />
      {connections.length === 0 ? (
        <p className="muted">
          No client acts as you. When you connect Claude, ChatGPT, VS Code or Cursor on toolgate&apos;s consent page, it
          is listed here, and you can revoke it.
        </p>
      ) : (
        <ul style={{ listStyle: "none", padding: 0, display: "grid", gap: "0.75rem" }}>
          {connections.map((connection) => (
            <li key={connection.id} data-testid={`own-connection-${connection.id}`}>
              <strong>{connection.clientName}</strong>{" "}
              <span className="muted small" style={{ overflowWrap: "anywhere" }}>
                {connection.clientKind === "cimd" ? connection.clientId : "registered itself"}
              </span>
              <div className="small">
                May: {connection.scopes.join(", ")} · connected <TimeAgo iso={connection.createdAt} /> · last used{" "}
                {connection.lastUsedAt ? <TimeAgo iso={connection.lastUsedAt} /> : "never"}
              </div>
              {connection.revokedAt ? (
                <span className="muted small">
                  revoked <TimeAgo iso={connection.revokedAt} />
                </span>
              ) : (
                <BusyButton type="button" busy={pending} onClick={() => revoke(connection.id)}>
                  Revoke {connection.clientName}
                </BusyButton>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
