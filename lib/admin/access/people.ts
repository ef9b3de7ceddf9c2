import { liveSessions } from "../../auth/sessions";
import { db, transaction } from "../../db";
import { endTenantSessions, findPeople } from "./sql";
import { insertAudit, type Admin } from "../sql";

/** The tenant's people with their live sessions, for the admin to see and end. */
export async function peopleSessions(tenantId: string) {
  const [people, sessions] = await Promise.all([findPeople(db, tenantId), liveSessions(tenantId)]);
  return people.map(({ _count, ...person }) => ({
    ...person,
    passkeys: _count.passkeys,
    sessions: sessions.filter((session) => session.userId === person.id),
  }));
}

/** Ends one session, or every session of one person, of the admin's tenant; recorded in the audit log. */
export async function endSessions(admin: Admin, target: { sessionId: string } | { userId: string }): Promise<number> {
  return transaction(async (tx) => {
    const count = await endTenantSessions(tx, admin.tenantId, target, "ended-by-admin");
    if (count > 0) await insertAudit(tx, admin, "sessions.ended", { ...target, count });
    return count;
  });
}
