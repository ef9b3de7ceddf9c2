// The tenant policy as an admin reads and types it: labels, units and allowed ranges, shared by the form (which
// shows them), the server (which checks against them and names the field by its label) and the audit list.

export type PolicyField =
  | "autoLimitCents"
  | "sessionCapCents"
  | "maxAutoWrites"
  | "approvalTtlSeconds"
  | "agentDailyCeilingCents"
  | "tenantDailyCeilingCents"
  | "rateOpenPerMin"
  | "stepUpAboveCents"
  | "twoPersonAboveCents"
  | "expiryWarningSeconds"
  | "secondAdminAboveCents"
  | "changeDelaySeconds"
  | "duplicateWindowHours"
  | "oauthRefreshIdleDays"
  | "oauthRefreshMaxDays";

export interface PolicyFieldSpec {
  name: PolicyField;
  label: string;
  help: string;
  unit: "money" | "count" | "seconds";
  min: number;
  max: number;
}

export const POLICY_FIELDS: PolicyFieldSpec[] = [
  {
    name: "autoLimitCents",
    label: "Auto limit",
    help: "An irreversible write above this amount needs approval.",
    unit: "money",
    min: 0,
    max: 10_000_000,
  },
  {
    name: "sessionCapCents",
    label: "Session cap",
    help: "Irreversible impact per conversation before approval is needed.",
    unit: "money",
    min: 0,
    max: 10_000_000,
  },
  {
    name: "maxAutoWrites",
    label: "Max automatic writes",
    help: "After this many writes in a conversation, reversible writes need approval.",
    unit: "count",
    min: 0,
    max: 1000,
  },
  {
    name: "approvalTtlSeconds",
    label: "Approval lifetime (seconds)",
    help: "How long a request waits for a decision before it expires.",
    unit: "seconds",
    min: 30,
    max: 7 * 24 * 3600,
  },
  {
    name: "agentDailyCeilingCents",
    label: "Agent daily ceiling",
    help: "Irreversible impact one agent may execute without approval in any 24 hours, across conversations.",
    unit: "money",
    min: 0,
    max: 10_000_000,
  },
  {
    name: "tenantDailyCeilingCents",
    label: "Tenant daily ceiling",
    help: "Irreversible impact all agents together may execute without approval in any 24 hours.",
    unit: "money",
    min: 0,
    max: 10_000_000,
  },
  {
    name: "rateOpenPerMin",
    label: "Conversations per key per minute",
    help: "How many conversations one API key may open in a minute.",
    unit: "count",
    min: 1,
    max: 100_000,
  },
  {
    name: "stepUpAboveCents",
    label: "Step-up above",
    help: "Approving a larger refund needs the supervisor's passkey, or their password, again.",
    unit: "money",
    min: 0,
    max: 10_000_000,
  },
  {
    name: "twoPersonAboveCents",
    label: "Two-person rule above",
    help: "A larger refund needs two different supervisors to approve.",
    unit: "money",
    min: 0,
    max: 10_000_000,
  },
  {
    name: "expiryWarningSeconds",
    label: "Expiry warning (seconds)",
    help: "Admins are warned this long before a request expires undecided (0: never).",
    unit: "seconds",
    min: 0,
    max: 24 * 3600,
  },
  {
    name: "secondAdminAboveCents",
    label: "Second admin above",
    help: "Raising any amount above this needs a second admin's approval (or, with one admin, the change delay).",
    unit: "money",
    min: 0,
    max: 10_000_000,
  },
  {
    name: "changeDelaySeconds",
    label: "Change delay (seconds)",
    help: "How long such a change waits for a second admin; with one admin it applies after this unless someone cancels.",
    unit: "seconds",
    min: 60,
    max: 30 * 24 * 3600,
  },
  {
    name: "duplicateWindowHours",
    label: "Duplicate refund window (hours)",
    help: "A refund matching one issued or still settling on the same order this many hours back waits for a supervisor.",
    unit: "count",
    min: 1,
    max: 720,
  },
  {
    name: "oauthRefreshIdleDays",
    label: "Connection idle lifetime (days)",
    help: "A connected AI client (such as Claude or ChatGPT) that has not refreshed its access for this many days must be connected again.",
    unit: "count",
    min: 1,
    max: 365,
  },
  {
    name: "oauthRefreshMaxDays",
    label: "Connection absolute lifetime (days)",
    help: "A connected AI client must be connected again this many days after the person approved it, however often it is used; at least the idle lifetime.",
    unit: "count",
    min: 1,
    max: 730,
  },
];

// Thousands grouped with commas, which the parse below drops again: "100,000.00" reads at a glance, "100000.00" not.
const grouped = new Intl.NumberFormat("en-US", { useGrouping: true, maximumFractionDigits: 2 });
const groupedMoney = new Intl.NumberFormat("en-US", { useGrouping: true, minimumFractionDigits: 2 });

/** A stored value as the form shows it: money in currency units ("50.00", "100,000.00"), counts and seconds grouped. */
export function displayValue(spec: PolicyFieldSpec, value: number): string {
  return spec.unit === "money" ? groupedMoney.format(value / 100) : grouped.format(value);
}

export function rangeText(spec: PolicyFieldSpec): string {
  return `${displayValue(spec, spec.min)} to ${displayValue(spec, spec.max)}`;
}

/** What the admin typed, back to stored numbers, or a sentence naming the field by its label and its range. */
export function parsePolicyValue(
  spec: PolicyFieldSpec,
  typed: string,
): { ok: true; value: number } | { ok: false; message: string } {
  const text = typed.trim().replaceAll(",", "");
  const pattern = spec.unit === "money" ? /^\d{1,9}(\.\d{1,2})?$/ : /^\d{1,9}$/;
  const shape = spec.unit === "money" ? "an amount such as 50.00" : "a whole number";
  if (!pattern.test(text)) return { ok: false, message: `${spec.label} must be ${shape}, from ${rangeText(spec)}.` };
  const value = spec.unit === "money" ? Math.round(Number(text) * 100) : Number(text);
  if (value < spec.min || value > spec.max)
    return { ok: false, message: `${spec.label} must be from ${rangeText(spec)}.` };
  return { ok: true, value };
}

/** A stored value as a person reads it in a list of changes: money as "80.00 USD", seconds with their unit. */
export function readableValue(spec: PolicyFieldSpec, value: number): string {
  if (spec.unit === "money") return `${displayValue(spec, value)} USD`;
  return spec.unit === "seconds" ? `${displayValue(spec, value)} s` : displayValue(spec, value);
}

/** The fields that differ between two policies, as "label: before → after" in the form's units. */
export function policyDiff(
  before: Partial<Record<PolicyField, number>>,
  after: Partial<Record<PolicyField, number>>,
): { label: string; before: string; after: string }[] {
  return POLICY_FIELDS.filter(
    (spec) => typeof after[spec.name] === "number" && before[spec.name] !== after[spec.name],
  ).map((spec) => ({
    label: spec.label,
    before: typeof before[spec.name] === "number" ? displayValue(spec, before[spec.name]!) : "—",
    after: displayValue(spec, after[spec.name]!),
  }));
}
