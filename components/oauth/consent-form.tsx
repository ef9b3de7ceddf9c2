"use client";

import { useRef, useState } from "react";
import { PasskeyNeeded, PasswordProof } from "@/components/step-up/step-up-field";
import { proveStepUp } from "@/components/step-up/step-up";
import { FormMessages } from "@/components/ui/field";
import type { StepUpWay } from "@/lib/auth/step-up/step-up";

const DELEGATED = "refunds:write";

/**
 * The consent form. Passing the refund permission on takes a fresh step-up for exactly this request (decision 014):
 * one passkey touch, or the password for a person without one (`way`); the proof goes with the form, and without it
 * the server grants everything chosen but refunds. Where the tenant requires single sign-on and the person has no
 * passkey yet, nothing can prove it: they are told to add a passkey, or to allow the rest without refunds.
 */
export function ConsentForm({
  params,
  offered,
  blocked,
  way,
  delegationDigest,
}: {
  params: Record<string, string | undefined>;
  offered: { scope: string; words: string }[];
  blocked: boolean;
  /** How this person proves a step-up in this session (`stepUpWayOf`). */
  way: StepUpWay;
  delegationDigest: string;
}) {
  const proofRef = useRef<HTMLInputElement>(null);
  const [refunds, setRefunds] = useState(offered.some((item) => item.scope === DELEGATED));
  const [password, setPassword] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  // Not a disabled state: a disabled fieldset or button would leave its values out of the form the proof submits.
  const proving = useRef(false);

  async function submit(event: React.FormEvent<HTMLFormElement>) {
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    if (submitter?.value !== "grant" || !refunds || proofRef.current?.value) return;
    event.preventDefault();
    if (way.with === "passkey-needed") {
      setProblem('Add a passkey under Settings first, or untick "Propose refunds" to allow the rest without it.');
      return;
    }
    if (proving.current) return;
    const form = event.currentTarget;
    proving.current = true;
    const proved = await proveStepUp(
      { kind: "oauth.refunds-delegated", digest: delegationDigest },
      way.with === "passkey" ? { passkey: true } : { passkey: false, password },
    );
    proving.current = false;
    if (!proved.ok) {
      setProblem(proved.message);
      return;
    }
    proofRef.current!.value = proved.proofId;
    form.requestSubmit(submitter);
  }

  return (
    <form method="post" action="/api/oauth/authorize" className="card" onSubmit={submit}>
      {Object.entries(params).map(([name, value]) =>
        value !== undefined ? <input key={name} type="hidden" name={name} value={value} /> : null,
      )}
      <input ref={proofRef} type="hidden" name="step_up_proof" defaultValue="" />
      <fieldset disabled={blocked}>
        <legend>What it may do as this agent</legend>
        {offered.map(({ scope, words }) => (
          <div className="field" key={scope}>
            <label>
              <input
                type="checkbox"
                name="scope_choice"
                value={scope}
                defaultChecked
                onChange={scope === DELEGATED ? (event) => setRefunds(event.target.checked) : undefined}
              />{" "}
              {words} <span className="small muted">{scope}</span>
            </label>
          </div>
        ))}
        {refunds ? (
          <div data-testid="consent-step-up">
            {way.with === "passkey-needed" ? (
              <PasskeyNeeded
                way={way}
                before="Letting it propose refunds passes your refund permission on, so confirm it is you"
                then="connect the client again"
                testId="consent-passkey-needed"
              />
            ) : (
              <p className="muted small">
                Letting it propose refunds passes your refund permission on: confirm it is you
                {way.with === "passkey" ? " with your passkey when you allow." : "."}
              </p>
            )}
            {way.with === "password" ? (
              <PasswordProof value={password} onChange={setPassword} testId="consent-password" />
            ) : null}
          </div>
        ) : null}
        <p className="muted small">
          Every call still goes through toolgate&apos;s checks; refunds above the limit wait for a supervisor. You
          (under Settings) and an admin can revoke this connection at any time.
        </p>
      </fieldset>
      <FormMessages error={problem} />
      <div className="actions">
        <button type="submit" name="decision" value="grant" disabled={blocked}>
          Allow
        </button>
        <button type="submit" name="decision" value="deny" className="secondary">
          Refuse
        </button>
      </div>
    </form>
  );
}
