"use client";

import { useState, useTransition } from "react";
import { updatePolicyAction } from "@/app/admin/policy/actions";

type Policy = {
  autoLimitCents: number;
  sessionCapCents: number;
  maxAutoWrites: number;
  approvalTtlSeconds: number;
  agentDailyCeilingCents: number;
  tenantDailyCeilingCents: number;
  rateOpenPerMin: number;
};

const FIELDS: [keyof Policy, string][] = [
  ["autoLimitCents", "Auto limit (cents): an irreversible write above it needs approval"],
  ["sessionCapCents", "Session cap (cents): irreversible impact per conversation before approval"],
  ["maxAutoWrites", "Max auto writes: after this many writes, reversible writes need approval"],
  ["approvalTtlSeconds", "Approval lifetime (seconds)"],
  ["agentDailyCeilingCents", "Agent daily ceiling (cents): irreversible impact one agent executes without approval in any 24 hours"],
  ["tenantDailyCeilingCents", "Tenant daily ceiling (cents): irreversible impact all agents execute without approval in any 24 hours"],
  ["rateOpenPerMin", "Conversations one API key may open per minute"],
];

export function PolicyForm({ policy }: { policy: Policy }) {
  const [values, setValues] = useState(() => Object.fromEntries(FIELDS.map(([name]) => [name, String(policy[name])])) as Record<keyof Policy, string>);
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
