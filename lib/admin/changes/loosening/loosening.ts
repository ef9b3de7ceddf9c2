import { POLICY_FIELDS, type PolicyField } from "../../policy/fields";

// The two-admin rule (docs/decisions/015) in one place: which admin changes loosen control over money, and which of
// those need a second person. Loosening changes need step-up; above the tenant's bound they wait for a different
// admin's approval (or, with one admin, a cancellable delay). Tightening applies at once.

export type PolicyNumbers = Record<PolicyField, number>;

/** Which way each policy number loosens control: typed over every field, so a new field cannot be forgotten. */
export const LOOSENS: Record<PolicyField, "up" | "down" | "never"> = {
  autoLimitCents: "up",
  sessionCapCents: "up",
  maxAutoWrites: "up",
  approvalTtlSeconds: "up",
  agentDailyCeilingCents: "up",
  tenantDailyCeilingCents: "up",
  rateOpenPerMin: "up",
  stepUpAboveCents: "up",
  twoPersonAboveCents: "up",
  // Warnings before an expiry change who hears of a request, not what may execute without one.
  expiryWarningSeconds: "never",
  secondAdminAboveCents: "up",
  changeDelaySeconds: "down",
  // A shorter window sees fewer earlier refunds as duplicates.
  duplicateWindowHours: "down",
  // A longer lifetime keeps a connected client working longer without the person approving it again.
  oauthRefreshIdleDays: "up",
  oauthRefreshMaxDays: "up",
};

/** Whether setting `field` from `before` to `after` loosens control (and so asks for the admin's step-up). */
export function loosensPolicy(field: PolicyField, before: number, after: number): boolean {
  const direction = LOOSENS[field];
  return (direction === "up" && after > before) || (direction === "down" && after < before);
}

export type AdminChangeKind =
  | { kind: "policy"; field: PolicyField; before: number; after: number; bound: number }
  | { kind: "refunds"; canRefund: boolean }
  | { kind: "api-key.create"; agentCanRefund: boolean }
  | { kind: "api-key.revoke" }
  | { kind: "sessions.end" }
  | { kind: "webhook.set" }
  | { kind: "webhook.remove" }
  | { kind: "chat.set" }
  | { kind: "chat.remove" }
  | { kind: "self-registration"; enabled: boolean }
  | { kind: "rules"; status: "live" | "shadow"; loosened: string[] }
  | { kind: "sso.set"; widensSignIn: boolean }
  | { kind: "sso.invite" }
  | { kind: "sso.remove"; required: boolean }
  | { kind: "time-zone"; readsTime: boolean };

export type Classification = "unchanged" | "tightening" | "loosening" | "needs-second-admin";

/**
 * Every admin change, classified. A money number raised above the bound in force, any other number loosened,
 * refunds granted, a key minted for an agent who may refund, live rules that drop or rewrite a rule in force, a
 * webhook or a chat channel set (every request's details go there) and self-registered OAuth clients allowed (an unverified
 * client may then be granted) need a second person; within-bound money and a key for an agent who may not refund
 * loosen (step-up only); withdrawing, revoking, ending sessions and removing or refusing tighten.
 */
export function classifyAdminChange(change: AdminChangeKind): Classification {
  switch (change.kind) {
    case "policy": {
      if (change.before === change.after) return "unchanged";
      if (!loosensPolicy(change.field, change.before, change.after)) return "tightening";
      const spec = POLICY_FIELDS.find((field) => field.name === change.field)!;
      return spec.unit !== "money" || change.after > change.bound ? "needs-second-admin" : "loosening";
    }
    case "refunds":
      return change.canRefund ? "needs-second-admin" : "tightening";
    case "api-key.create":
      return change.agentCanRefund ? "needs-second-admin" : "loosening";
    case "chat.set":
    case "webhook.set":
      return "needs-second-admin";
    case "sso.set":
      // A new provider, client, domain or role mapping can sign anyone in as any person of the tenant.
      return change.widensSignIn ? "needs-second-admin" : "loosening";
    case "sso.invite":
      // Whoever holds the invited subject at the provider signs in as the person.
      return "needs-second-admin";
    case "sso.remove":
      // A provider the tenant requires is the only way in for its supervisors: removing it turns their passwords on.
      return change.required ? "loosening" : "tightening";
    case "self-registration":
      return change.enabled ? "needs-second-admin" : "tightening";
    case "rules":
      // A shadow set enforces nothing; a live set that drops or rewrites a rule in force may let a call through.
      return change.status === "live" && change.loosened.length > 0 ? "needs-second-admin" : "tightening";
    case "time-zone":
      // Moving the zone moves every office-hours rule in force: a call held at night may then run on its own.
      return change.readsTime ? "needs-second-admin" : "tightening";
    case "api-key.revoke":
    case "sessions.end":
    case "webhook.remove":
    case "chat.remove":
      return "tightening";
  }
}

/** How changing one policy number from `before` to `after` is classified, against the bound as it was before. */
function classifyPolicyField(field: PolicyField, before: PolicyNumbers, after: PolicyNumbers) {
  return classifyAdminChange({
    kind: "policy",
    field,
    before: before[field],
    after: after[field],
    bound: before.secondAdminAboveCents,
  });
}

/**
 * A policy save split by the rule: the numbers that apply now (tightened, or loosened within the bound in force
 * before the save) and, when any number needs a second admin, the whole save as the change that waits.
 */
export function splitPolicyChange(
  before: PolicyNumbers,
  after: PolicyNumbers,
): { now: PolicyNumbers; waiting: PolicyNumbers | null } {
  const now = { ...before };
  let waiting = false;
  for (const spec of POLICY_FIELDS) {
    if (classifyPolicyField(spec.name, before, after) === "needs-second-admin") waiting = true;
    else now[spec.name] = after[spec.name];
  }
  return { now, waiting: waiting ? { ...after } : null };
}

/** The labels of the policy numbers a save loosens (step-up needed, decision 014); empty when it loosens nothing. */
export function loosenedFields(before: PolicyNumbers, after: PolicyNumbers): string[] {
  return POLICY_FIELDS.filter((spec) => {
    const classification = classifyPolicyField(spec.name, before, after);
    return classification === "loosening" || classification === "needs-second-admin";
  }).map((spec) => spec.label);
}

/** What replacing a live set that no longer validates (validation tightened by an upgrade) counts as dropping. */
export const UNREADABLE_RULES = "every rule of the set in force, which no longer validates";

/**
 * The rules in force that a new live set drops or rewrites (by id and exact text). Only adding rules is tightening:
 * whether a rewritten condition holds more or fewer calls is not decided here, so any rewrite counts as loosening.
 * A set in force that no longer validates (`null`) still stops every call it covers (fail closed), and what it holds
 * cannot be compared, so replacing it counts as dropping all of it.
 */
export function loosenedRules(
  before: readonly { id: string; text: string }[] | null,
  after: readonly { id: string; text: string }[],
): string[] {
  if (before === null) return [UNREADABLE_RULES];
  const kept = new Map(after.map((rule) => [rule.id, rule.text.trim()]));
  return before.filter((rule) => kept.get(rule.id) !== rule.text.trim()).map((rule) => rule.id);
}
