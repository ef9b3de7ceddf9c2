import { ApiKeys } from "@/components/api-keys";
import { DecisionLogExport } from "@/components/audit/decision-log-export";
import { PolicyForm } from "@/components/policy-form";
import { WebhookForm } from "@/components/webhook-form";
import { agentKeys, hasWebhook, peopleSessions, recentAudit, tenantPolicy } from "@/lib/admin";
import { PeopleSessions } from "@/components/admin/sessions";
import { requireRole } from "@/lib/auth/guards";

export const dynamic = "force-dynamic";

export default async function AdminPolicyPage() {
  const user = await requireRole(["ADMIN"]);
  const [policy, agents, audit, people, webhook] = await Promise.all([
    tenantPolicy(user.tenantId),
    agentKeys(user.tenantId),
    recentAudit(user.tenantId),
    peopleSessions(user.tenantId),
    hasWebhook(user.tenantId),
  ]);
  const serializableAgents = agents.map((agent) => ({
    ...agent,
    apiKeys: agent.apiKeys.map((key) => ({ ...key, createdAt: key.createdAt.toISOString(), revokedAt: key.revokedAt?.toISOString() ?? null })),
  }));
  return (
    <main>
      <h1>Policy for {user.tenantId}</h1>
      <PolicyForm policy={policy} />
      <h2>Approval webhook</h2>
      <WebhookForm configured={webhook} />
      <h2>Agent API keys</h2>
      <ApiKeys agents={serializableAgents} />
      <h2>People and sessions</h2>
      <PeopleSessions
        people={people.map((person) => ({
          ...person,
          sessions: person.sessions.map((session) => ({ ...session, createdAt: session.createdAt.toISOString(), lastSeenAt: session.lastSeenAt.toISOString() })),
        }))}
      />
      <h2>Decision log</h2>
      <DecisionLogExport tenantId={user.tenantId} />
      <h2>Recent changes</h2>
      <table>
        <tbody>
          {audit.map((row) => (
            <tr key={String(row.id)}>
              <td>{row.createdAt.toISOString()}</td>
              <td>{row.action}</td>
              <td>
                <code>{JSON.stringify(row.detail)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}
