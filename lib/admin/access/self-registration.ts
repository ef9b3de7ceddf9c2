import { consumeStepUpFor, type StepUpHolder } from "../../auth/step-up/step-up";
import { transaction } from "../../db";
import { classifyAdminChange } from "../changes/loosening/loosening";
import { holdChange, type HeldChange } from "../changes/two-admin";
import { insertAudit, type Admin } from "../sql";
import { lockTenantSelfRegistration, setTenantSelfRegistration } from "./sql";

export type SelfRegistrationResult = "changed" | "unchanged" | "step-up-required" | HeldChange;

/**
 * Refuses self-registered OAuth clients (RFC 7591) in the tenant at once; allowing them lets a client whose name
 * nobody verified be granted by any agent, so it consumes the admin's step-up proof and, as the one classifier says,
 * waits for a second admin or the delay (docs/decisions/015). Audited either way.
 */
export async function setSelfRegistration(
  admin: Admin,
  enabled: boolean,
  holder: StepUpHolder,
): Promise<SelfRegistrationResult> {
  return transaction(async (tx) => {
    if ((await lockTenantSelfRegistration(tx, admin.tenantId)) === enabled) return "unchanged";
    const classification = classifyAdminChange({ kind: "self-registration", enabled });
    const stepUp =
      classification === "tightening" ? null : await consumeStepUpFor(tx, holder, { kind: "admin.self-registration" });
    if (classification !== "tightening" && !stepUp) return "step-up-required";
    if (classification === "needs-second-admin")
      return holdChange(
        tx,
        admin,
        { kind: "self-registration", change: { enabled: true }, base: { enabled: false } },
        stepUp,
      );
    await setTenantSelfRegistration(tx, admin.tenantId, enabled);
    await insertAudit(
      tx,
      admin,
      enabled ? "oauth.registration-allowed" : "oauth.registration-refused",
      stepUp ? { stepUp } : {},
    );
    return "changed";
  });
}
