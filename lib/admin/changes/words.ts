import { count, utcWords } from "../../words";
import type { HeldChange } from "./two-admin";

const HOUR_MS = 3_600_000;

/** How far off `at` is, in the largest whole unit: "1 day", "5 hours", "20 minutes". */
function fromNow(at: Date, now: Date): string {
  const ms = Math.max(0, at.getTime() - now.getTime());
  if (ms >= 48 * HOUR_MS) return count(Math.round(ms / (24 * HOUR_MS)), "day");
  if (ms >= 2 * HOUR_MS) return count(Math.round(ms / HOUR_MS), "hour");
  return count(Math.max(1, Math.round(ms / 60_000)), "minute");
}

/**
 * What the proposer is told about a held change, in words: who must act, and until when (how long from now, then the
 * exact time), and where it waits: under Changes waiting on the Policy and keys page, whichever page proposed it.
 */
export function heldWords(held: HeldChange | null, now = new Date()): string | null {
  if (!held) return null;
  const when = `${fromNow(held.expiresAt, now)} (${utcWords(held.expiresAt)})`;
  return held.mode === "second-admin"
    ? `This loosens control, so it waits for another admin to approve it within ${when}; it is listed under Changes waiting on Policy and keys.`
    : `This loosens control, so it applies in ${when} unless a supervisor or admin cancels it; it is listed under Changes waiting on Policy and keys.`;
}

/** The code of an answer that says the change needs the admin's step-up first (and that nothing was changed). */
export const STEP_UP_REQUIRED = "step-up.required";
