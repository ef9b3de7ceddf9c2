import { consumeStepUpFor, type StepUpHolder } from "../../auth/step-up/step-up";
import { transaction } from "../../db";
import { classifyAdminChange } from "../changes/loosening/loosening";
import { holdChange, type HeldChange } from "../changes/two-admin";
import { findTenantAgent, setCanRefund } from "./sql";
import { insertAudit, type Admin } from "../sql";

/**
 * Withdraws an agent's refund permission at once; a grant consumes the admin's step-up proof for this agent and
 * is held for a second admin (docs/decisions/015). Both audited, and effective on the agent's next call.
 */
export async function setRefundPermission(
  admin: Admin,
  userId: string,
  canRefund: boolean,
  holder: StepUpHolder,
): Promise<"changed" | "unchanged" | "not-found" | "step-up-required" | HeldChange> {
  return transaction(async (tx) => {
    const agent = await findTenantAgent(tx, admin.tenantId, userId);
    if (!agent) return "not-found";
    if (agent.canRefund === canRefund) return "unchanged";
    if (classifyAdminChange({ kind: "refunds", canRefund }) === "needs-second-admin") {
      const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.refunds-granted", userId });
      if (!stepUp) return "step-up-required";
      return holdChange(
        tx,
        admin,
        {
          kind: "refunds",
          change: { userId: agent.id, email: agent.email, canRefund: true },
          base: { canRefund: false },
        },
        stepUp,
      );
    }
    if ((await setCanRefund(tx, admin.tenantId, agent.id, false)) === 0) return "unchanged";
    await insertAudit(tx, admin, "agent.refunds-withdrawn", {
      userId: agent.id,
      email: agent.email,
      before: true,
      after: false,
    });
    return "changed";
  });
}
