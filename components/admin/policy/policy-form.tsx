"use client";

import { useState, useTransition } from "react";
import { updatePolicyAction } from "@/lib/admin/policy/actions";
import { displayValue, POLICY_FIELDS, type PolicyField, rangeText } from "@/lib/admin/policy/fields";
import { useStepUp } from "@/components/step-up/step-up-field";
import { BusyButton } from "@/components/ui/busy-button";

type Policy = Record<PolicyField, number>;

/** The stored numbers as the form shows them (money in currency units). */
function formValues(policy: Policy): Record<PolicyField, string> {
  return Object.fromEntries(POLICY_FIELDS.map((spec) => [spec.name, displayValue(spec, policy[spec.name])])) as Record<
    PolicyField,
    string
  >;
}

/**
 * Money in currency units, each field with its allowed range; the server names a bad field by its label. A change
 * that loosens control (a limit, ceiling, threshold or the approval lifetime raised) asks for the admin's step-up.
 */
export function PolicyForm({ policy, hasPasskey }: { policy: Policy; hasPasskey: boolean }) {
  const stepUp = useStepUp(hasPasskey);
  const [values, setValues] = useState(() => formValues(policy));
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [pending, startTransition] = useTransition();

  function save() {
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
              name={spec.name}
              inputMode={spec.unit === "money" ? "decimal" : "numeric"}
              value={values[spec.name]}
              onChange={(event) => setValues({ ...values, [spec.name]: event.target.value })}
              aria-describedby={`${spec.name}-help`}
            />
          </label>
          <br />
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
