import { ApiKeys } from "@/components/api-keys";
import { DecisionLogExport } from "@/components/audit/decision-log-export";
import { PolicyForm } from "@/components/policy-form";
import { WebhookForm } from "@/components/webhook-form";
import { Connections } from "@/components/admin/connections";
import { PendingChanges } from "@/components/admin/pending-changes";
import { PeopleSessions } from "@/components/admin/sessions";
import { RefundPermissions } from "@/components/refund-permissions";
import { TimeAgo } from "@/components/ui/time-ago";
import {
  agentKeys,
  hasWebhook,
  pendingChanges,
  peopleSessions,
  recentAudit,
  tenantName,
  tenantPolicy,
  type AuditEntry,
} from "@/lib/admin";
import { requireRole } from "@/lib/auth/guards";
import { passkeysOf } from "@/lib/auth/passkeys";
import { policyDiff } from "@/lib/admin/policy-fields";
import { tenantConnections } from "@/lib/oauth/connections";

export const dynamic = "force-dynamic";

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
};

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
  if (entry.action.startsWith("change.")) return [`change ${String(detail.changeId)}`];
  return [];
}

export default async function AdminPolicyPage() {
  const user = await requireRole(["ADMIN"], "/admin/policy");
  const [tenant, policy, agents, audit, people, webhook, passkeys, oauth, waiting] = await Promise.all([
    tenantName(user.tenantId),
    tenantPolicy(user.tenantId),
    agentKeys(user.tenantId),
    recentAudit(user.tenantId),
    peopleSessions(user.tenantId),
    hasWebhook(user.tenantId),
    passkeysOf(user.id),
    tenantConnections(user.tenantId),
    pendingChanges(user.tenantId),
  ]);
  const hasPasskey = passkeys.length > 0;
  const serializableAgents = agents.map((agent) => ({
    ...agent,
    apiKeys: agent.apiKeys.map((key) => ({
      ...key,
      createdAt: key.createdAt.toISOString(),
      revokedAt: key.revokedAt?.toISOString() ?? null,
    })),
  }));
  return (
    <main>
      <h1>Policy for {tenant}</h1>
      <h2>Changes waiting</h2>
      <PendingChanges changes={waiting} viewerId={user.id} canApprove hasPasskey={hasPasskey} />
      <PolicyForm policy={policy} hasPasskey={hasPasskey} />
      <h2>Approval webhook</h2>
      <WebhookForm configured={webhook} />
      <h2>Agents&apos; refund permission</h2>
      <RefundPermissions
        agents={agents.map(({ id, email, name, canRefund }) => ({ id, email, name, canRefund }))}
        hasPasskey={hasPasskey}
      />
      <h2>Agent API keys</h2>
      <ApiKeys agents={serializableAgents} hasPasskey={hasPasskey} />
      <h2>Connected clients (OAuth)</h2>
      <Connections
        dcrEnabled={oauth.dcrEnabled}
        connections={oauth.connections.map((connection) => ({
          ...connection,
          createdAt: connection.createdAt.toISOString(),
          lastUsedAt: connection.lastUsedAt?.toISOString() ?? null,
          revokedAt: connection.revokedAt?.toISOString() ?? null,
        }))}
      />
      <h2>People and sessions</h2>
      <PeopleSessions
        hasPasskey={hasPasskey}
        people={people.map((person) => ({
          ...person,
          sessions: person.sessions.map((session) => ({
            ...session,
            createdAt: session.createdAt.toISOString(),
            lastSeenAt: session.lastSeenAt.toISOString(),
          })),
        }))}
      />
      <h2>Decision log</h2>
      <DecisionLogExport tenantId={user.tenantId} />
      <h2>Recent changes</h2>
      {audit.length === 0 ? (
        <p className="muted">
          No changes yet. Every policy change, key and permission change appears here with who made it.
        </p>
      ) : (
        <table className="stack" data-testid="audit">
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>What</th>
              <th>Changes</th>
            </tr>
          </thead>
          <tbody>
            {audit.map((entry) => (
              <tr key={String(entry.id)} data-testid="audit-row">
                <td data-label="When">
                  <TimeAgo iso={entry.createdAt.toISOString()} />
                </td>
                <td data-label="Who">{entry.actor}</td>
                <td data-label="What">{ACTION_WORDS[entry.action] ?? entry.action}</td>
                <td data-label="Changes">
                  {changes(entry).map((line) => (
                    <div key={line} data-testid="audit-change">
                      {line}
                    </div>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
