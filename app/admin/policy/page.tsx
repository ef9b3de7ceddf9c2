import { AdminDesk } from "@/components/admin/admin-desk";
import { agentKeys } from "@/lib/admin/access/agent-keys";
import { hasWebhook } from "@/lib/admin/policy/webhook";
import { pendingChanges } from "@/lib/admin/changes/two-admin";
import { peopleSessions } from "@/lib/admin/access/people";
import { recentAudit } from "@/lib/admin/audit";
import { tenantPolicy } from "@/lib/admin/policy/numbers";
import { requireRole } from "@/lib/auth/guards";
import { passkeysOf } from "@/lib/auth/step-up/passkeys/passkeys";
import { tenantConnections } from "@/lib/oauth/consent/connections";
import { ssoSettingsOf } from "@/lib/auth/sso/settings";

export const metadata = { title: "Policy and keys" };

export const dynamic = "force-dynamic";

export default async function AdminPolicyPage() {
  const user = await requireRole(["ADMIN"], "/admin/policy");
  const [policy, agents, audit, people, webhook, passkeys, oauth, waiting, sso] = await Promise.all([
    tenantPolicy(user.tenantId),
    agentKeys(user.tenantId),
    recentAudit(user.tenantId),
    peopleSessions(user.tenantId),
    hasWebhook(user.tenantId),
    passkeysOf(user.id),
    tenantConnections(user.tenantId),
    pendingChanges(user.tenantId),
    ssoSettingsOf(user.tenantId),
  ]);
  return (
    <AdminDesk
      {...{ policy, agents, audit, people, webhook, passkeys, oauth, waiting, sso }}
      tenant={user.tenantName}
      tenantId={user.tenantId}
      viewerId={user.id}
    />
  );
}
