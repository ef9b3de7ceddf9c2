import { appendAuditLog } from "../../audit/sql";
import { db, transaction } from "../../db";
import { findConnections, findDcrEnabled, revokeGrant, type ConnectionRow } from "./sql";

// What an admin sees and does with the tenant's OAuth connections (decision 017), and a person with their own.
// Allowing self-registered clients is an admin change under the two-admin rule: lib/admin/access/self-registration.ts.

export type { ConnectionRow } from "./sql";

export async function tenantConnections(
  tenantId: string,
): Promise<{ connections: ConnectionRow[]; dcrEnabled: boolean }> {
  const [connections, dcrEnabled] = await Promise.all([findConnections(db, tenantId), findDcrEnabled(db, tenantId)]);
  return { connections, dcrEnabled };
}

/** Revokes a live connection of the admin's tenant; false when there is none such. Takes effect at the next call. */
export function revokeConnection(admin: { id: string; tenantId: string }, grantId: string): Promise<boolean> {
  return revokeAudited(admin, grantId, "revoked-by-admin");
}

/** The person's own connections: the clients that act as them, live ones first. */
export async function ownConnections(person: { id: string; tenantId: string }): Promise<ConnectionRow[]> {
  return findConnections(db, person.tenantId, person.id);
}

/** Revokes one of the person's own live connections; false when they have none such. Audited like an admin's. */
export function revokeOwnConnection(person: { id: string; tenantId: string }, grantId: string): Promise<boolean> {
  return revokeAudited(person, grantId, "revoked-by-person", person.id);
}

/** Revokes a live grant of the actor's tenant (only one of `ownerId`'s when given) and audits who revoked it. */
function revokeAudited(
  actor: { id: string; tenantId: string },
  grantId: string,
  reason: "revoked-by-admin" | "revoked-by-person",
  ownerId?: string,
): Promise<boolean> {
  return transaction(async (tx) => {
    const revoked = await revokeGrant(tx, actor.tenantId, grantId, reason, ownerId);
    if (!revoked) return false;
    await appendAuditLog(tx, {
      tenantId: actor.tenantId,
      actorId: actor.id,
      action: "oauth.revoked",
      detail: { grantId, agentId: revoked.agentId, clientId: revoked.clientId, reason },
    });
    return true;
  });
}
