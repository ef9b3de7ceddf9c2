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

// The page is long (at 390 px several screens): its sections, in order, for the links at its top.
const SECTIONS = [
  ["changes-waiting", "Changes waiting"],
  ["limits", "Limits and approvals"],
  ["webhook", "Approval webhook"],
  ["sso", "Single sign-on"],
  ["refund-permission", "Agents' refund permission"],
  ["api-keys", "Agent API keys"],
  ["oauth", "Connected clients (OAuth)"],
  ["people", "People and sessions"],
  ["decision-log", "Decision log"],
  ["recent-changes", "Recent changes"],
] as const;
type SectionId = (typeof SECTIONS)[number][0];
const TITLES = Object.fromEntries(SECTIONS) as Record<SectionId, string>;

const Heading = ({ id }: { id: SectionId }) => <h2 id={id}>{TITLES[id]}</h2>;

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
      <nav aria-label="On this page" className="on-this-page">
        <ul>
          {SECTIONS.map(([id, title]) => (
            <li key={id}>
              <a href={`#${id}`}>{title}</a>
            </li>
          ))}
        </ul>
      </nav>
      <Heading id="changes-waiting" />
      <PendingChanges changes={waiting} viewerId={viewerId} canApprove hasPasskey={hasPasskey} />
      <Heading id="limits" />
      <PolicyForm policy={policy} hasPasskey={hasPasskey} />
      <Heading id="webhook" />
      <WebhookForm configured={webhook} hasPasskey={hasPasskey} />
      <Heading id="sso" />
      <SsoForm settings={sso} hasPasskey={hasPasskey} />
      <Heading id="refund-permission" />
      <RefundPermissions
        agents={agents.map(({ id, email, name, canRefund }) => ({ id, email, name, canRefund }))}
        hasPasskey={hasPasskey}
      />
      <Heading id="api-keys" />
      <ApiKeys agents={serializableAgents} hasPasskey={hasPasskey} />
      <Heading id="oauth" />
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
      <Heading id="people" />
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
      <Heading id="decision-log" />
      <DecisionLogExport tenantId={tenantId} />
      <Heading id="recent-changes" />
      <RecentChanges audit={audit} />
    </main>
  );
}
