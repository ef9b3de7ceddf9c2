import { transaction } from "../../db";
import { attributesAccessed } from "../../policy-rules/engine/entities";
import { classifyAdminChange } from "../changes/loosening/loosening";
import { holdChange, type HeldChange } from "../changes/two-admin";
import { insertAudit } from "../sql";
import { knowsTimeZone, lockTimeZone, setTimeZone } from "./sql";

// The tenant's time zone: the one the rules' `context.hour` and `context.weekday` are read in. Moving it moves
// every "office hours" rule, so while the live rules read the time a change waits for a second admin
// (docs/decisions/015); otherwise it applies at once. Either way it is audited.

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
  | { ok: false; code: "time-zone.unknown"; message: string };

export async function setRulesTimeZone(admin: Admin, timeZone: string): Promise<TimeZoneResult> {
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
      const held = await holdChange(
        tx,
        admin,
        { kind: "time-zone", change: { timeZone }, base: { timeZone: current.timeZone } },
        null,
      );
      return { ok: true, held };
    }
    await setTimeZone(tx, admin.tenantId, timeZone);
    await insertAudit(tx, admin, "rules.time-zone-set", { before: current.timeZone, after: timeZone });
    return { ok: true, set: timeZone };
  });
}
