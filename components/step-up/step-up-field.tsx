"use client";

import Link from "next/link";
import { useState, type Ref } from "react";
import type { StepUpPurpose, StepUpWay } from "@/lib/auth/step-up/step-up";
import { proveStepUp } from "./step-up";

type Result<T> = { ok: true; data: T } | { ok: false; code: string; message: string };

/** The codes an action answers when it needs a step-up: `step-up.required`, or its own `<area>.step-up-required`. */
const asksForStepUp = (code: string) => code === "step-up.required" || code.endsWith(".step-up-required");

/**
 * Step-up for an action that needs it only sometimes (an admin change that loosens control): the action is tried
 * without a proof; when it answers that it needs one (`asksForStepUp`), a person with a passkey is asked for one touch at once and the
 * action is tried again with the proof; a person without one is shown a password field (`field`) and the next try
 * proves with it first. Where the form can tell that what is filled in needs it (`expected`: why, in words), the field
 * shows at once, saying why, and the first try proves with it.
 */
export function useStepUp(hasPasskey: boolean, expected: string | null = null) {
  const [asked, setAsked] = useState(false);
  const [password, setPassword] = useState("");
  const passwordFirst = (asked || expected !== null) && !hasPasskey;

  async function run<T>(purpose: StepUpPurpose, attempt: (proofId?: string) => Promise<Result<T>>): Promise<Result<T>> {
    if (passwordFirst) {
      const proved = await proveStepUp(purpose, { passkey: false, password });
      if (!proved.ok) return { ok: false, code: "step-up.refused", message: proved.message };
      setPassword("");
      const done = await attempt(proved.proofId);
      if (done.ok) setAsked(false);
      return done;
    }
    const first = await attempt();
    if (first.ok || !asksForStepUp(first.code)) return first;
    if (!hasPasskey) {
      setAsked(true);
      return { ...first, message: `${first.message} Enter your password in the field for it and try again.` };
    }
    const proved = await proveStepUp(purpose, { passkey: true });
    if (!proved.ok) return { ok: false, code: "step-up.refused", message: proved.message };
    return attempt(proved.proofId);
  }

  const field = passwordFirst ? (
    <PasswordProof value={password} onChange={setPassword} before={expected ?? undefined} testId="step-up-password" />
  ) : null;

  return { run, field };
}

/**
 * The password field of a step-up, the same wherever a person without a passkey confirms it is them; `before` names
 * what asks for it ("Above 100.00 USD").
 */
export function PasswordProof({
  value,
  onChange,
  before,
  testId,
  inputRef,
}: {
  value: string;
  onChange: (value: string) => void;
  before?: string;
  testId?: string;
  /** For a form that moves focus to the field (a wrong password, a step that asks for it). */
  inputRef?: Ref<HTMLInputElement>;
}) {
  return (
    <label className="field">
      {before ? `${before}: your password, to confirm it is you` : "Your password, to confirm it is you"}
      <input
        ref={inputRef}
        type="password"
        autoComplete="current-password"
        value={value}
        onChange={(event) => onChange(event.target.value)}
        data-testid={testId}
      />
    </label>
  );
}

/**
 * In place of the password field where the tenant requires single sign-on and this person has no passkey yet: what
 * confirms it instead, and where to add one. `before` names what asks for it, `then` what to do once it is added.
 */
export function PasskeyNeeded({
  way,
  before,
  then,
  testId,
}: {
  way: Extract<StepUpWay, { with: "passkey-needed" }>;
  before: string;
  then: string;
  testId: string;
}) {
  return (
    <p className="notice" data-testid={testId}>
      {before}: your organization signs you in through {way.provider.name}, so a passkey confirms this, not your
      password. <Link href="/settings">Add a passkey under Settings</Link>, then {then}.
    </p>
  );
}
