import type { HeldChange } from "./two-admin";

/** What the proposer is told about a held change, in words: who must act, and until when. */
export function heldWords(held: HeldChange | null): string | null {
  if (!held) return null;
  const until = `${held.expiresAt.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return held.mode === "second-admin"
    ? `This loosens control, so it waits for another admin to approve it before ${until}; see Changes waiting.`
    : `This loosens control, so it applies at ${until} unless a supervisor or admin cancels it; see Changes waiting.`;
}

/** The code of an answer that says the change needs the admin's step-up first (and that nothing was changed). */
export const STEP_UP_REQUIRED = "step-up.required";
