import { ApiKeys } from "./access/api-keys";
import { Connections } from "./access/connections";
import { PendingChanges } from "./changes/pending-changes";
import { PolicyForm } from "./policy/policy-form";
import { RecentChanges } from "./recent-changes";
import { RefundPermissions } from "./access/refund-permissions";
import { PeopleSessions } from "./access/sessions";
import { SsoForm } from "./access/sso-form";
import { WebhookForm } from "./policy/webhook-form";
import { DecisionLogExport } from "@/components/audit/decision-log-export";
import type { agentKeys } from "@/lib/admin/access/agent-keys";
import type { hasWebhook } from "@/lib/admin/policy/webhook";
import type { pendingChanges } from "@/lib/admin/changes/two-admin";
import type { peopleSessions } from "@/lib/admin/access/people";
import type { recentAudit } from "@/lib/admin/audit";
import type { tenantPolicy } from "@/lib/admin/policy/numbers";
import type { passkeysOf } from "@/lib/auth/step-up/passkeys/passkeys";
import type { tenantConnections } from "@/lib/oauth/consent/connections";
import type { SsoSettingsView } from "@/lib/auth/sso/settings";

type Loaded<F extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;

/** Everything an admin controls, in the order they check it: what waits, the policy, who may do what, the records. */
export function AdminDesk({
  tenantId,
  viewerId,
  tenant,
  policy,
  agents,
  audit,
  people,
  webhook,
  passkeys,
  oauth,
  waiting,
  sso,
}: {
  tenantId: string;
  viewerId: string;
  tenant: string;
  policy: Loaded<typeof tenantPolicy>;
  agents: Loaded<typeof agentKeys>;
  audit: Loaded<typeof recentAudit>;
  people: Loaded<typeof peopleSessions>;
  webhook: Loaded<typeof hasWebhook>;
  passkeys: Loaded<typeof passkeysOf>;
  oauth: Loaded<typeof tenantConnections>;
  waiting: Loaded<typeof pendingChanges>;
  sso: SsoSettingsView | null;
}) {
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
    <main id="main">
      <h1>Policy for {tenant}</h1>
      <h2>Changes waiting</h2>
      <PendingChanges changes={waiting} viewerId={viewerId} canApprove hasPasskey={hasPasskey} />
      <h2>Limits and approvals</h2>
      <PolicyForm policy={policy} hasPasskey={hasPasskey} />
      <h2>Approval webhook</h2>
      <WebhookForm configured={webhook} hasPasskey={hasPasskey} />
      <h2>Single sign-on</h2>
      <SsoForm settings={sso} hasPasskey={hasPasskey} />
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
        hasPasskey={hasPasskey}
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
      <DecisionLogExport tenantId={tenantId} />
      <h2>Recent changes</h2>
      <RecentChanges audit={audit} />
    </main>
  );
}
