import { roundedSpan, utcWords } from "../../words";
import type { HeldChange } from "./two-admin";

/**
 * What the proposer is told about a held change, in words: who must act, and until when (how long from now, then the
 * exact time), and where it waits: under Changes waiting on the Policy and keys page, whichever page proposed it.
 */
export function heldWords(held: HeldChange | null, now = new Date()): string | null {
  if (!held) return null;
  const when = `${roundedSpan(held.expiresAt.getTime() - now.getTime())} (${utcWords(held.expiresAt)})`;
  return held.mode === "second-admin"
    ? `This loosens control, so it waits for another admin to approve it within ${when}; it is listed under Changes waiting on Policy and keys.`
    : `This loosens control, so it applies in ${when} unless a supervisor or admin cancels it; it is listed under Changes waiting on Policy and keys.`;
}

/** The code of an answer that says the change needs the admin's step-up first (and that nothing was changed). */
export const STEP_UP_REQUIRED = "step-up.required";
