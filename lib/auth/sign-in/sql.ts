import type { Client, Db } from "../../db";

/** The person with this email, with what signing in needs (password hash, active), or null. */
export async function findUserByEmail(db: Client, email: string) {
  return db.user.findUnique({
    where: { email },
    select: { id: true, email: true, name: true, role: true, tenantId: true, passwordHash: true, active: true },
  });
}

/** The person's stored password hash, or null when there is no such person. */
export async function findPasswordHash(db: Client, userId: string): Promise<string | null> {
  const user = await db.user.findUnique({ where: { id: userId }, select: { passwordHash: true } });
  return user?.passwordHash ?? null;
}

/** Stores a stronger hash of the same password (a bcrypt hash replaced at sign-in): no change to the person. */
export async function rehashPassword(db: Client, userId: string, passwordHash: string): Promise<void> {
  await db.user.update({ where: { id: userId }, data: { passwordHash }, select: { id: true } });
}

/**
 * A person's new password, in one statement with its audit row ("password.changed", the session it was changed in):
 * setting `passwordChangedAt` ends the person's sessions and connections (by trigger), each audited there too.
 */
export async function changePasswordAudited(
  db: Db,
  change: { userId: string; passwordHash: string; sessionId: string },
): Promise<void> {
  await db.$executeRaw`
    WITH changed AS (
      UPDATE "User" SET "passwordHash" = ${change.passwordHash}, "passwordChangedAt" = CURRENT_TIMESTAMP
      WHERE "id" = ${change.userId}
      RETURNING "id", "tenantId")
    INSERT INTO "AuditLog" ("tenantId", "actorId", "action", "detail")
    SELECT "tenantId", "id", 'password.changed', jsonb_build_object('session_id', ${change.sessionId}::text)
    FROM changed`;
}
