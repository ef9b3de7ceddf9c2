"use client";

import { useState, useTransition } from "react";
import { updatePolicyAction } from "@/app/admin/policy/actions";

type Policy = { autoLimitCents: number; sessionCapCents: number; maxAutoWrites: number; approvalTtlSeconds: number };

const FIELDS: [keyof Policy, string][] = [
  ["autoLimitCents", "Auto limit (cents): an irreversible write above it needs approval"],
  ["sessionCapCents", "Session cap (cents): irreversible impact per conversation before approval"],
  ["maxAutoWrites", "Max auto writes: after this many writes, reversible writes need approval"],
  ["approvalTtlSeconds", "Approval lifetime (seconds)"],
];

export function PolicyForm({ policy }: { policy: Policy }) {
  const [values, setValues] = useState<Record<keyof Policy, string>>(() => ({
    autoLimitCents: String(policy.autoLimitCents),
    sessionCapCents: String(policy.sessionCapCents),
    maxAutoWrites: String(policy.maxAutoWrites),
    approvalTtlSeconds: String(policy.approvalTtlSeconds),
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
