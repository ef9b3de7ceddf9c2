"use client";

import { useState, useTransition } from "react";
import { updatePolicyAction } from "@/app/admin/policy/actions";

type Policy = {
  autoLimitCents: number;
  sessionCapCents: number;
  maxAutoWrites: number;
  approvalTtlSeconds: number;
  stepUpAboveCents: number;
  twoPersonAboveCents: number;
  expiryWarningSeconds: number;
};

const FIELDS: [keyof Policy, string][] = [
  ["autoLimitCents", "Auto limit (cents): an irreversible write above it needs approval"],
  ["sessionCapCents", "Session cap (cents): irreversible impact per conversation before approval"],
  ["maxAutoWrites", "Max auto writes: after this many writes, reversible writes need approval"],
  ["approvalTtlSeconds", "Approval lifetime (seconds)"],
  ["stepUpAboveCents", "Step-up above (cents): approving a larger refund needs a passkey or the password again"],
  ["twoPersonAboveCents", "Two-person rule above (cents): a larger refund needs two different supervisors"],
  ["expiryWarningSeconds", "Warn admins this many seconds before a request expires (0: never)"],
];

export function PolicyForm({ policy }: { policy: Policy }) {
  const [values, setValues] = useState<Record<keyof Policy, string>>(() => ({
    autoLimitCents: String(policy.autoLimitCents),
    sessionCapCents: String(policy.sessionCapCents),
    maxAutoWrites: String(policy.maxAutoWrites),
    approvalTtlSeconds: String(policy.approvalTtlSeconds),
    stepUpAboveCents: String(policy.stepUpAboveCents),
    twoPersonAboveCents: String(policy.twoPersonAboveCents),
    expiryWarningSeconds: String(policy.expiryWarningSeconds),
  }));
  const [message, setMessage] = useState<string | null>(null);
  const [pending, startTransition] = useTransition();

  function save() {
    startTransition(async () => {
      const response = await updatePolicyAction(values);
      setMessage(response.ok ? "Saved." : response.message);
    });
  }

  return (
    <div className="card">
      {FIELDS.map(([name, label]) => (
        <p key={name}>
          <label>
            {label}
            <br />
            <input name={name} inputMode="numeric" value={values[name]} onChange={(event) => setValues({ ...values, [name]: event.target.value })} />
          </label>
        </p>
      ))}
      <button type="button" className="primary" disabled={pending} onClick={save}>
        Save policy
      </button>{" "}
      {message && <span role="status">{message}</span>}
    </div>
  );
}
