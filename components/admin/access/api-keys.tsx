"use client";

import { useState, useTransition } from "react";
import { createKeyAction, revokeKeyAction } from "@/lib/admin/access/actions";
import { TimeAgo } from "@/components/ui/time-ago";
import { useStepUp } from "@/components/step-up/step-up-field";
import { Table } from "@/components/ui/table";
import { FormMessages } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";

interface Agent {
  id: string;
  email: string;
  name: string;
  canRefund: boolean;
  apiKeys: {
    id: string;
    prefix: string;
    createdAt: string;
    revokedAt: string | null;
    pendingChangeId: string | null;
  }[];
}

/** Each agent's keys; creating one asks for the admin's step-up, revoking one does not. */
export function ApiKeys({ agents, hasPasskey }: { agents: Agent[]; hasPasskey: boolean }) {
  const stepUp = useStepUp(hasPasskey);
  const [shown, setShown] = useState<{ email: string; key: string; held: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();

  const create = (agent: Agent) =>
    startTransition(async () => {
      setError(null);
      const response = await stepUp.run({ kind: "admin.key-created", userId: agent.id }, (proofId) =>
        createKeyAction({ userId: agent.id, proofId }),
      );
      if (response.ok) setShown({ email: agent.email, key: response.data.key, held: response.data.held });
      else setError(response.message);
    });
  const revoke = (keyId: string) =>
    startTransition(async () => {
      const response = await revokeKeyAction({ keyId });
      if (!response.ok) setError(response.message);
    });

  return (
    <div>
      {shown && (
        <p className="notice" data-testid="new-key">
          New key for {shown.email}, shown once: <code>{shown.key}</code>
          {shown.held && <span data-testid="new-key-held"> {shown.held}</span>}
        </p>
      )}
      <FormMessages error={error} />
      {stepUp.field}
      <Table
        rows={agents}
        rowKey={(agent) => agent.id}
        columns={[
          {
            label: "Agent",
            cell: (agent) => (
              <>
                {agent.name}
                <div className="muted">
                  {agent.email} · {agent.canRefund ? "can refund" : "no refunds"}
                </div>
              </>
            ),
          },
          {
            label: "Keys",
            cell: (agent) =>
              agent.apiKeys.map((key) => (
                <div key={key.id}>
                  <code>{key.prefix}…</code> created <TimeAgo iso={key.createdAt} />{" "}
                  {key.pendingChangeId && !key.revokedAt && (
                    <span className="muted">waits for approval (see Changes waiting) </span>
                  )}
                  {key.revokedAt ? (
                    <span className="muted">revoked</span>
                  ) : (
                    <BusyButton type="button" className="danger" busy={pending} onClick={() => revoke(key.id)}>
                      Revoke
                    </BusyButton>
                  )}
                </div>
              )),
          },
          {
            label: "New key",
            cell: (agent) => (
              <BusyButton type="button" busy={pending} onClick={() => create(agent)}>
                New key
              </BusyButton>
            ),
          },
        ]}
      />
    </div>
  );
}
