"use client";

import { useRef, useState, useTransition } from "react";
import { updatePolicyAction } from "@/lib/admin/policy/actions";
import { displayValue, parsePolicyValue, POLICY_FIELDS, type PolicyField, rangeText } from "@/lib/admin/policy/fields";
import { loosensPolicy } from "@/lib/admin/changes/loosening/loosening";
import { useStepUp } from "@/components/step-up/step-up-field";
import { BusyButton } from "@/components/ui/busy-button";
import type { Said } from "@/components/ui/field";

type Policy = Record<PolicyField, number>;

/** The stored numbers as the form shows them (money in currency units). */
function formValues(policy: Policy): Record<PolicyField, string> {
  return Object.fromEntries(POLICY_FIELDS.map((spec) => [spec.name, displayValue(spec, policy[spec.name])])) as Record<
    PolicyField,
    string
  >;
}

/**
 * Money in currency units, each field with its allowed range. A value out of its range is named at its field, which
 * takes the focus, before anything is sent (the server checks it again). A change that loosens control (a limit,
 * ceiling, threshold or the approval lifetime raised) asks for the admin's step-up.
 */
export function PolicyForm({ policy, hasPasskey }: { policy: Policy; hasPasskey: boolean }) {
  const [values, setValues] = useState(() => formValues(policy));
  // What is typed so far loosens numbers in force: the password field shows before the first save, not after it.
  const loosened = POLICY_FIELDS.filter((spec) => {
    const typed = parsePolicyValue(spec, values[spec.name]);
    return typed.ok && loosensPolicy(spec.name, policy[spec.name], typed.value);
  }).map((spec) => spec.label);
  const stepUp = useStepUp(hasPasskey, loosened.length > 0 ? `Loosens control (${loosened.join(", ")})` : null);
  const [message, setMessage] = useState<Said>(null);
  const [invalid, setInvalid] = useState<{ field: PolicyField; text: string } | null>(null);
  const inputs = useRef<Partial<Record<PolicyField, HTMLInputElement | null>>>({});
  const [pending, startTransition] = useTransition();

  function save() {
    setMessage(null);
    for (const spec of POLICY_FIELDS) {
      const parsed = parsePolicyValue(spec, values[spec.name]);
      if (!parsed.ok) {
        setInvalid({ field: spec.name, text: parsed.message });
        inputs.current[spec.name]?.focus();
        return;
      }
    }
    setInvalid(null);
    startTransition(async () => {
      const response = await stepUp.run({ kind: "admin.policy", values }, (proofId) =>
        updatePolicyAction({ policy: values, proofId }),
      );
      if (!response.ok) setMessage({ ok: false, text: response.message });
      else if (response.data.held) {
        // The form shows what is in force: the held numbers are on the waiting change, not here.
        setValues(formValues(response.data.policy));
        setMessage({ ok: true, text: `${response.data.changed ? "Saved what tightens. " : ""}${response.data.held}` });
      } else
        setMessage({ ok: true, text: response.data.changed ? "Saved." : "Nothing changed, so nothing was recorded." });
    });
  }

  return (
    <form
      className="card"
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      {POLICY_FIELDS.map((spec) => (
        <p key={spec.name}>
          <label>
            {spec.label}
            <br />
            <input
              ref={(element) => {
                inputs.current[spec.name] = element;
              }}
              name={spec.name}
              inputMode={spec.unit === "money" ? "decimal" : "numeric"}
              value={values[spec.name]}
              onChange={(event) => {
                setValues({ ...values, [spec.name]: event.target.value });
                if (invalid?.field === spec.name) setInvalid(null);
              }}
              aria-invalid={invalid?.field === spec.name}
              aria-describedby={
                invalid?.field === spec.name ? `${spec.name}-error ${spec.name}-help` : `${spec.name}-help`
              }
            />
          </label>
          <br />
          {invalid?.field === spec.name && (
            <>
              <span className="error" id={`${spec.name}-error`} role="alert" data-testid="policy-field-error">
                {invalid.text}
              </span>
              <br />
            </>
          )}
          <span className="muted" id={`${spec.name}-help`}>
            {spec.help} Allowed: {rangeText(spec)}
            {spec.unit === "money" ? ", in currency units" : ""}.
          </span>
        </p>
      ))}
      {stepUp.field}
      <div className="actions">
        <BusyButton type="submit" className="primary" busy={pending}>
          Save policy
        </BusyButton>
        {message && (
          <span role="status" className={message.ok ? "ok" : "error"} data-testid="policy-message">
            {message.text}
          </span>
        )}
      </div>
    </form>
  );
}
