"use client";

import { useState } from "react";
import type { StepUpPurpose } from "@/lib/auth/step-up";
import { proveStepUp } from "./step-up";

type Result<T> = { ok: true; data: T } | { ok: false; code: string; message: string };

/**
 * Step-up for an action that needs it only sometimes (an admin change that loosens control): the action is tried
 * without a proof; when it answers `step-up.required`, a person with a passkey is asked for one touch at once and the
 * action is tried again with the proof; a person without one is shown a password field (`field`) and the next try
 * proves with it first.
 */
export function useStepUp(hasPasskey: boolean) {
  const [asked, setAsked] = useState(false);
  const [password, setPassword] = useState("");

  async function run<T>(purpose: StepUpPurpose, attempt: (proofId?: string) => Promise<Result<T>>): Promise<Result<T>> {
    if (asked && !hasPasskey) {
      const proved = await proveStepUp(purpose, { passkey: false, password });
      if (!proved.ok) return { ok: false, code: "step-up.refused", message: proved.message };
      setPassword("");
      const done = await attempt(proved.proofId);
      if (done.ok) setAsked(false);
      return done;
    }
    const first = await attempt();
    if (first.ok || first.code !== "step-up.required") return first;
    if (!hasPasskey) {
      setAsked(true);
      return { ...first, message: `${first.message} Enter your password below and try again.` };
    }
    const proved = await proveStepUp(purpose, { passkey: true });
    if (!proved.ok) return { ok: false, code: "step-up.refused", message: proved.message };
    return attempt(proved.proofId);
  }

  const field =
    asked && !hasPasskey ? (
      <p>
        <label>
          Your password, to confirm it is you{" "}
          <input
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            data-testid="step-up-password"
          />
        </label>
      </p>
    ) : null;

  return { run, field };
}
