"use client";

import { startAuthentication } from "@simplewebauthn/browser";
import { passkeyStepUpAction, passkeyStepUpOptionsAction, passwordStepUpAction } from "@/lib/approvals/actions";
import { passkeyFailure } from "@/components/ui/passkey-words";

/**
 * A fresh proof that the approver is who the session says, before money moves: their passkey when they have one,
 * else their password typed again. Null when proved, else what to tell them.
 */
export async function proveStepUp(
  method: { passkey: true } | { passkey: false; password: string },
): Promise<string | null> {
  if (method.passkey) {
    const options = await passkeyStepUpOptionsAction({});
    if (!options.ok) return options.message;
    let response;
    try {
      response = await startAuthentication({ optionsJSON: options.data });
    } catch {
      return passkeyFailure(window.location);
    }
    const proved = await passkeyStepUpAction({
      response: response as unknown as Parameters<typeof passkeyStepUpAction>[0]["response"],
    });
    return proved.ok ? null : proved.message;
  }
  if (!method.password) return "Enter your password to confirm it is you.";
  const proved = await passwordStepUpAction({ password: method.password });
  return proved.ok ? null : proved.message;
}
