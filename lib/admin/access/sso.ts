import { removeSsoSettings, saveSsoSettings, type SsoSettingsInput } from "../../auth/sso/settings";
import type { StepUpHolder } from "../../auth/step-up/step-up";
import { classifyAdminChange } from "../changes/loosening/loosening";
import { holdChange } from "../changes/two-admin";
import type { Admin } from "../sql";

/**
 * The admin's single sign-on form: a change that decides who may sign in as whom waits for a second admin (or the
 * delay), like the webhook (docs/decisions/015); the rest applies at once.
 */
export function setSso(admin: Admin, input: SsoSettingsInput, holder: StepUpHolder) {
  return saveSsoSettings(admin, input, holder, async (tx, proposal, stepUp, widensSignIn) =>
    classifyAdminChange({ kind: "sso.set", widensSignIn }) === "needs-second-admin"
      ? holdChange(tx, admin, { kind: "sso", ...proposal }, stepUp)
      : null,
  );
}

/** Removing the provider: a step-up when the tenant requires it (its supervisors' passwords come back on), else at once. */
export function removeSso(admin: Admin, holder: StepUpHolder) {
  return removeSsoSettings(
    admin,
    holder,
    (required) => classifyAdminChange({ kind: "sso.remove", required }) !== "tightening",
  );
}
