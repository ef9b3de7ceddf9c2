"use client";

import { useState, useTransition } from "react";
import { setRefundPermissionAction } from "@/lib/admin/actions";
import { useStepUp } from "./ui/step-up-field";

/**
 * Withdraw (at once) or grant (with the admin's step-up, once a second admin approves) each agent's refund
 * permission; it takes effect on the agent's next call.
 */
export function RefundPermissions({
  agents,
  hasPasskey,
}: {
  agents: { id: string; email: string; name: string; canRefund: boolean }[];
  hasPasskey: boolean;
}) {
  const stepUp = useStepUp(hasPasskey);
  const [error, setError] = useState<string | null>(null);
  const [held, setHeld] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();
  const set = (userId: string, canRefund: boolean) =>
    startTransition(async () => {
      setError(null);
      const response = canRefund
        ? await stepUp.run({ kind: "admin.refunds-granted", userId }, (proofId) =>
            setRefundPermissionAction({ userId, canRefund, proofId }),
          )
        : await setRefundPermissionAction({ userId, canRefund });
      if (!response.ok) setError(response.message);
      setHeld(response.ok ? response.data.held : null);
    });
  return (
    <div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {held && (
        <p className="notice" role="status" data-testid="refund-permission-held">
          {held}
        </p>
      )}
      {stepUp.field}
      <table className="stack">
        <thead>
          <tr>
            <th>Agent</th>
            <th>Refunds</th>
            <th>Change</th>
          </tr>
        </thead>
        <tbody>
          {agents.map((agent) => (
            <tr key={agent.id} data-testid="refund-permission" data-user-id={agent.id}>
              <td data-label="Agent">
                {agent.name}
                <div className="muted">{agent.email}</div>
              </td>
              <td data-label="Refunds" data-testid="refund-permission-state">
                {agent.canRefund ? "may issue refunds" : "may not issue refunds"}
              </td>
              <td data-label="Change">
                {agent.canRefund ? (
                  <button type="button" className="danger" disabled={pending} onClick={() => set(agent.id, false)}>
                    Withdraw refunds from {agent.name}
                  </button>
                ) : (
                  <button type="button" disabled={pending} onClick={() => set(agent.id, true)}>
                    Grant refunds to {agent.name}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
