"use client";

import { useState, useTransition } from "react";
import { setRefundPermissionAction } from "@/lib/admin/access/actions";
import { useStepUp } from "@/components/step-up/step-up-field";
import { Table } from "@/components/ui/table";
import { FormMessages } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";

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
      <FormMessages error={error} notice={held} noticeTestId="refund-permission-held" />
      {stepUp.field}
      <Table
        rows={agents}
        rowKey={(agent) => agent.id}
        rowProps={(agent) => ({ "data-testid": "refund-permission", "data-user-id": agent.id })}
        columns={[
          {
            label: "Agent",
            cell: (agent) => (
              <>
                {agent.name}
                <div className="muted">{agent.email}</div>
              </>
            ),
          },
          {
            label: "Refunds",
            testId: "refund-permission-state",
            cell: (agent) => (agent.canRefund ? "may issue refunds" : "may not issue refunds"),
          },
          {
            label: "Change",
            cell: (agent) =>
              agent.canRefund ? (
                <BusyButton type="button" className="danger" busy={pending} onClick={() => set(agent.id, false)}>
                  Withdraw refunds from {agent.name}
                </BusyButton>
              ) : (
                <BusyButton type="button" busy={pending} onClick={() => set(agent.id, true)}>
                  Grant refunds to {agent.name}
                </BusyButton>
              ),
          },
        ]}
      />
    </div>
  );
}
