import { saveSsoSettings, type SsoSettingsInput } from "../auth/sso/settings";
import type { StepUpHolder } from "../auth/step-up";
import { holdChange } from "./changes";
import type { Admin } from "./sql";

/**
 * The admin's single sign-on form: a change that decides who may sign in as whom waits for a second admin (or the
 * delay), like the webhook (docs/decisions/015); the rest applies at once.
 */
export function setSso(admin: Admin, input: SsoSettingsInput, holder: StepUpHolder) {
  return saveSsoSettings(admin, input, holder, (tx, proposal, stepUp) =>
    holdChange(tx, admin, { kind: "sso", ...proposal }, stepUp),
  );
}
