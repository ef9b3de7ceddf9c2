import { consumeStepUpFor, type StepUpHolder } from "../../auth/step-up/step-up";
import { transaction } from "../../db";
import { attributesAccessed } from "../../policy-rules/engine/entities";
import { classifyAdminChange } from "../changes/loosening/loosening";
import { holdChange, type HeldChange } from "../changes/two-admin";
import { insertAudit } from "../sql";
import { knowsTimeZone, lockTimeZone, setTimeZone } from "./sql";

// The tenant's time zone: the one the rules' `context.hour` and `context.weekday` are read in. Moving it moves
// every "office hours" rule, so while the live rules read the time a change needs the admin's step-up for exactly
// that zone and then waits for a second admin (docs/decisions/015), like every other held change; otherwise it
// applies at once. Either way it is audited.

interface Admin {
  id: string;
  tenantId: string;
}

/** Whether a rule set's text reads the time of day or the day of the week, however it spells the access. */
export const readsTime = (text: string | null) =>
  text !== null && attributesAccessed(text).some((name) => name === "hour" || name === "weekday");

export type TimeZoneResult =
  | { ok: true; set: string }
  | { ok: true; held: HeldChange }
  | { ok: false; code: "time-zone.unknown" | "step-up.required"; message: string };

export async function setRulesTimeZone(admin: Admin, timeZone: string, holder: StepUpHolder): Promise<TimeZoneResult> {
  return transaction(async (tx) => {
    if (!(await knowsTimeZone(tx, timeZone)))
      return {
        ok: false,
        code: "time-zone.unknown",
        message: `"${timeZone}" is not a time zone this server knows; use an IANA name such as Europe/Paris or UTC.`,
      };
    const current = await lockTimeZone(tx, admin.tenantId);
    const change = { kind: "time-zone" as const, readsTime: readsTime(current.liveText) };
    if (current.timeZone !== timeZone && classifyAdminChange(change) === "needs-second-admin") {
      const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.time-zone", timeZone });
      if (!stepUp)
        return {
          ok: false,
          code: "step-up.required",
          message:
            "The live rules read the time, so moving their time zone needs you to confirm it is you first. Nothing was changed.",
        };
      const held = await holdChange(
        tx,
        admin,
        { kind: "time-zone", change: { timeZone }, base: { timeZone: current.timeZone } },
        stepUp,
      );
      return { ok: true, held };
    }
    await setTimeZone(tx, admin.tenantId, timeZone);
    await insertAudit(tx, admin, "rules.time-zone-set", { before: current.timeZone, after: timeZone });
    return { ok: true, set: timeZone };
  });
}
