import type { Client, Db, Tx } from "../db";
import { Prisma, type Role } from "../generated/prisma/client";

// The auth module's statements: API keys, people signing in, their sessions and the sign-in throttle.

/** Stores a new API key by its hash and prefix (the key itself is never stored). */
export async function insertApiKey(
  db: Db,
  key: { id: string; tenantId: string; userId: string; prefix: string; hash: string },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ApiKey" ("id", "tenantId", "userId", "prefix", "hash")
    VALUES (${key.id}, ${key.tenantId}, ${key.userId}, ${key.prefix}, ${key.hash})`;
}

/**
 * Which rows authenticate a key with this hash: the key, not revoked and not waiting for a second admin, of an active agent of the key's own
 * tenant (aliases k and ku). Every lookup of an agent by its key uses this, alone or joined to more.
 */
export function agentKeyRows(hash: string): { from: Prisma.Sql; where: Prisma.Sql } {
  return {
    from: Prisma.sql`"ApiKey" k JOIN "User" ku ON ku."id" = k."userId" AND ku."tenantId" = k."tenantId"`,
    where: Prisma.sql`k."hash" = ${hash} AND k."revokedAt" IS NULL AND k."pendingChangeId" IS NULL AND ku."active" AND ku."role" = 'AGENT'`,
  };
}

/** The key id, agent and tenant that a key with this hash authenticates, or undefined. */
export async function findAgentByKeyHash(
  db: Db,
  hash: string,
): Promise<{ apiKeyId: string; userId: string; tenantId: string } | undefined> {
  const key = agentKeyRows(hash);
  const [row] = await db.$queryRaw<{ apiKeyId: string; userId: string; tenantId: string }[]>`
    SELECT k."id" AS "apiKeyId", ku."id" AS "userId", k."tenantId" FROM ${key.from} WHERE ${key.where}`;
  return row;
}

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

/** Writes audit rows, one per entry. */
export async function insertAuditLogs(
  db: Client,
  rows: { tenantId: string; actorId: string; action: string; detail: Prisma.InputJsonValue }[],
): Promise<void> {
  await db.auditLog.createMany({ data: rows });
}

/** Opens a session row for the person. */
export async function insertSession(
  db: Client,
  session: { id: string; userId: string; tenantId: string; address: string; userAgent: string },
): Promise<void> {
  await db.session.create({ data: session, select: { id: true } });
}

/**
 * The person of a live session (not ended, not idle past `idleSeconds`, not older than `maxSeconds`, person
 * active), or undefined; marks the session seen when it was last seen more than `touchEverySeconds` ago.
 */
export async function findSessionUser(
  db: Db,
  sessionId: string,
  limits: { idleSeconds: number; maxSeconds: number; touchEverySeconds: number },
): Promise<{ id: string; email: string; name: string; role: Role; tenantId: string; tenantName: string } | undefined> {
  const [row] = await db.$queryRaw<
    { id: string; email: string; name: string; role: Role; tenantId: string; tenantName: string }[]
  >`
    WITH live AS (
      SELECT s."id", s."lastSeenAt", u."id" AS "userId", u."email", u."name", u."role"::text AS "role", u."tenantId"
      FROM "Session" s JOIN "User" u ON u."id" = s."userId" AND u."tenantId" = s."tenantId"
      WHERE s."id" = ${sessionId} AND s."endedAt" IS NULL AND u."active"
        AND s."lastSeenAt" > CURRENT_TIMESTAMP - make_interval(secs => ${limits.idleSeconds}::int)
        AND s."createdAt" > CURRENT_TIMESTAMP - make_interval(secs => ${limits.maxSeconds}::int)
    ), touched AS (
      UPDATE "Session" SET "lastSeenAt" = CURRENT_TIMESTAMP
      WHERE "id" = (SELECT "id" FROM live WHERE "lastSeenAt" < CURRENT_TIMESTAMP - make_interval(secs => ${limits.touchEverySeconds}::int))
    )
    SELECT live."userId" AS "id", live."email", live."name", live."role", live."tenantId", t."name" AS "tenantName"
    FROM live JOIN "Tenant" t ON t."id" = live."tenantId"`;
  return row;
}

/** Ends the session if it is still live, recording why. */
export async function markSessionEnded(db: Client, sessionId: string, reason: string): Promise<void> {
  await db.session.updateMany({
    where: { id: sessionId, endedAt: null },
    data: { endedAt: new Date(), endedReason: reason },
  });
}

/** The tenant's live sessions (at most 500), by person and then most recently seen first. */
export async function findLiveSessions(db: Client, tenantId: string) {
  return db.session.findMany({
    where: { tenantId, endedAt: null },
    orderBy: [{ userId: "asc" }, { lastSeenAt: "desc" }],
    take: 500,
    select: { id: true, userId: true, createdAt: true, lastSeenAt: true, address: true, userAgent: true },
  });
}

/**
 * Locks the throttle row of a key, creating it at zero failures when missing. Returns its failures, the seconds
 * it stays locked (0 when not locked) and whether it was last counted more than `forgetAfterSeconds` ago.
 */
export async function lockThrottle(
  tx: Tx,
  key: string,
  forgetAfterSeconds: number,
): Promise<{ failures: number; retryAfter: number; stale: boolean }> {
  await tx.$executeRaw`INSERT INTO "SignInThrottle" ("key") VALUES (${key}) ON CONFLICT ("key") DO NOTHING`;
  const [row] = await tx.$queryRaw<{ failures: number; retryAfter: number; stale: boolean }[]>`
    SELECT "failures",
           COALESCE(CEIL(EXTRACT(EPOCH FROM "lockedUntil" - CURRENT_TIMESTAMP)), 0)::int AS "retryAfter",
           "updatedAt" < CURRENT_TIMESTAMP - make_interval(secs => ${forgetAfterSeconds}) AS "stale"
    FROM "SignInThrottle" WHERE "key" = ${key} FOR UPDATE`;
  return row;
}

/** Sets a key's failures, counted now, and locks it for `seconds` from now (unlocks it when 0). */
export async function setThrottleFailures(tx: Tx, key: string, failures: number, seconds: number): Promise<void> {
  await tx.$executeRaw`
    UPDATE "SignInThrottle" SET "failures" = ${failures}, "updatedAt" = CURRENT_TIMESTAMP,
      "lockedUntil" = CASE WHEN ${seconds}::int > 0 THEN CURRENT_TIMESTAMP + make_interval(secs => ${seconds}::int) END
    WHERE "key" = ${key}`;
}

/** Forgets a key's failures and lock. */
export async function deleteThrottle(db: Db, key: string): Promise<void> {
  await db.$executeRaw`DELETE FROM "SignInThrottle" WHERE "key" = ${key}`;
}

/** Takes one failure back from a key that has any, and unlocks it. */
export async function takeBackFailure(db: Db, key: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "SignInThrottle" SET "failures" = "failures" - 1, "lockedUntil" = NULL
    WHERE "key" = ${key} AND "failures" > 0`;
}
