"use client";

import { startAuthentication } from "@simplewebauthn/browser";
import type { StepUpPurpose } from "@/lib/auth/step-up/step-up";
import { beginStepUpAction, passkeyStepUpAction, passwordStepUpAction } from "@/lib/auth/step-up/actions";
import { passkeyFailure } from "./passkey-words";

export type StepUpAnswer = { ok: true; proofId: string } | { ok: false; message: string };

/**
 * A fresh proof for one purpose (decision 014): one passkey touch over a challenge that carries what it approves,
 * or for a person without a passkey their password typed again. The proof counts only in this session and only for
 * this purpose; the action that does the thing consumes it.
 */
export async function proveStepUp(
  purpose: StepUpPurpose,
  method: { passkey: true } | { passkey: false; password: string },
): Promise<StepUpAnswer> {
  if (!method.passkey) {
    if (!method.password) return { ok: false, message: "Enter your password to confirm it is you." };
    const proved = await passwordStepUpAction({ purpose, password: method.password });
    return proved.ok ? { ok: true, proofId: proved.data.proofId } : proved;
  }
  const begun = await beginStepUpAction({ purpose });
  if (!begun.ok) return begun;
  if (begun.data.method === "password")
    return { ok: false, message: "You have no passkey; confirm with your password." };
  let response;
  try {
    response = await startAuthentication({ optionsJSON: begun.data.options });
  } catch {
    return { ok: false, message: passkeyFailure(window.location) };
  }
  const proved = await passkeyStepUpAction({
    proofId: begun.data.proofId,
    response: response as unknown as Parameters<typeof passkeyStepUpAction>[0]["response"],
  });
  return proved.ok ? { ok: true, proofId: proved.data.proofId } : proved;
}
