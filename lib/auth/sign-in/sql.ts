import type { Client } from "../../db";
import { Prisma } from "../../generated/prisma/client";

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

/**
 * Stores a new hash of the person's password. `changed` marks a new password (which ends the person's sessions,
 * by trigger); a rehash of the same password in a stronger form leaves it unset.
 */
export async function setPasswordHash(
  db: Client,
  userId: string,
  passwordHash: string,
  { changed }: { changed: boolean },
): Promise<void> {
  await db.user.update({
    where: { id: userId },
    data: changed ? { passwordHash, passwordChangedAt: new Date() } : { passwordHash },
    select: { id: true },
  });
}

export async function insertAuditLogs(
  db: Client,
  rows: { tenantId: string; actorId: string; action: string; detail: Prisma.InputJsonValue }[],
): Promise<void> {
  await db.auditLog.createMany({ data: rows });
}
