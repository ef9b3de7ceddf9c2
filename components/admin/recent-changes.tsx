import { Table } from "@/components/ui/table";
import { TimeAgo } from "@/components/ui/time-ago";
import type { AuditEntry } from "@/lib/admin/audit";
import type { ChangeProposal } from "@/lib/admin/changes/two-admin";
import { policyDiff } from "@/lib/admin/policy/fields";

const ACTION_WORDS: Record<string, string> = {
  "policy.updated": "Changed the policy",
  "api-key.created": "Created an API key",
  "api-key.revoked": "Revoked an API key",
  "agent.refunds-granted": "Granted refunds",
  "agent.refunds-withdrawn": "Withdrew refunds",
  "webhook.set": "Set the approval webhook",
  "webhook.removed": "Removed the approval webhook",
  "sessions.ended": "Ended sessions",
  "decision-log.exported": "Exported the decision log",
  "sign-in.throttled": "Sign-in locked after failed passwords",
  "change.proposed": "Proposed a change that waits",
  "change.approved": "Approved a waiting change",
  "change.cancelled": "Cancelled a waiting change",
  "change.superseded": "A waiting change no longer applied",
  "change.expired": "A waiting change expired",
  "change.applied-after-delay": "A waiting change applied after its delay",
  "passkey.added": "Added a passkey",
  "passkey.removed": "Removed a passkey",
  "passkey.removed-by-admin": "Removed a person's passkeys",
  "oauth.granted": "Connected a client (OAuth)",
  "oauth.revoked": "Revoked a client's connection",
  "oauth.registration-allowed": "Allowed self-registered clients",
  "oauth.registration-refused": "Refused self-registered clients",
  "rules.published": "Published policy rules",
  "rules.shadow-withdrawn": "Withdrew the shadow rules",
};

/** What a waiting change would change, by its kind. */
const CHANGE_KIND_WORDS: Record<ChangeProposal["kind"], string> = {
  policy: "Limits and approvals",
  refunds: "An agent's refund permission",
  "api-key": "An API key",
  rules: "Policy rules",
  webhook: "The approval webhook",
  chat: "Slack or Teams",
  "self-registration": "Self-registered clients",
  sso: "Single sign-on",
  "sso-invite": "A single sign-on invitation",
  "time-zone": "The rules' time zone",
};

const changeKindWords = (kind: unknown) =>
  Object.hasOwn(CHANGE_KIND_WORDS, String(kind)) ? CHANGE_KIND_WORDS[kind as ChangeProposal["kind"]] : "A change";

function changes(entry: AuditEntry): string[] {
  const detail = entry.detail;
  if (entry.action === "policy.updated") {
    return policyDiff(
      (detail.before ?? {}) as Record<string, number>,
      (detail.after ?? {}) as Record<string, number>,
    ).map((change) => `${change.label}: ${change.before} → ${change.after}`);
  }
  if (entry.action.startsWith("agent.refunds-"))
    return [
      `${String(detail.email)}: refunds ${detail.before ? "allowed" : "not allowed"} → ${detail.after ? "allowed" : "not allowed"}`,
    ];
  if (entry.action.startsWith("api-key.")) return [`key ${String(detail.keyId)}`];
  if (entry.action === "oauth.granted")
    return [`${String(detail.clientName)}: ${Array.isArray(detail.scopes) ? detail.scopes.join(", ") : ""}`];
  if (entry.action === "oauth.revoked") return [`connection ${String(detail.grantId)} (${String(detail.reason)})`];
  if (entry.action.startsWith("change.")) return [`${changeKindWords(detail.kind)} (${String(detail.changeId)})`];
  if (entry.action === "rules.published") return [`version ${String(detail.version)}, ${String(detail.status)}`];
  return [];
}

/** The tenant's recent admin changes: when, who, what, and each change in words. */
export function RecentChanges({ audit }: { audit: AuditEntry[] }) {
  return audit.length === 0 ? (
    <p className="muted">
      No changes yet. Every policy change, key and permission change appears here with who made it.
    </p>
  ) : (
    <Table
      testId="audit"
      rows={audit}
      rowKey={(entry) => String(entry.id)}
      rowProps={() => ({ "data-testid": "audit-row" })}
      columns={[
        { label: "When", cell: (entry) => <TimeAgo iso={entry.createdAt.toISOString()} /> },
        { label: "Who", cell: (entry) => entry.actor },
        { label: "What", cell: (entry) => ACTION_WORDS[entry.action] ?? entry.action },
        {
          label: "Changes",
          cell: (entry) =>
            changes(entry).map((line) => (
              <div key={line} data-testid="audit-change">
                {line}
              </div>
            )),
        },
      ]}
    />
  );
}
