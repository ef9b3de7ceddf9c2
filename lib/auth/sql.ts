import type { Client, Db, Tx } from "../db";
import { Prisma, type Role } from "../generated/prisma/client";

/** How the sign-in that started a session was proved. */
export type SignedInVia = "password" | "sso";

// The auth module's statements: API keys, people signing in, their sessions, the sign-in throttle, passkeys and
// step-up proofs.

export async function insertSession(
  db: Db,
  session: {
    id: string;
    userId: string;
    tenantId: string;
    address: string;
    userAgent: string;
    signedInVia: SignedInVia;
  },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "Session" ("id", "userId", "tenantId", "address", "userAgent", "signedInVia")
    VALUES (${session.id}, ${session.userId}, ${session.tenantId}, ${session.address}, ${session.userAgent},
            ${session.signedInVia})`;
}

/** How long a session lives: idle at most `idleSeconds`, at most `maxSeconds` from its sign-in (SESSION_*_SECONDS). */
export interface SessionLimits {
  idleSeconds: number;
  maxSeconds: number;
}

/** The session row `alias` is within its limits, by the database's clock: every statement asking "live?" uses this. */
const withinLimits = (alias: string, limits: SessionLimits) => {
  const session = Prisma.raw(alias);
  return Prisma.sql`${session}."lastSeenAt" > CURRENT_TIMESTAMP - make_interval(secs => ${limits.idleSeconds}::int)
    AND ${session}."createdAt" > CURRENT_TIMESTAMP - make_interval(secs => ${limits.maxSeconds}::int)`;
};

/**
 * The person of a live session (not ended, not idle past `idleSeconds`, not older than `maxSeconds`, person
 * active), or null; marks the session seen when it was last seen more than `touchEverySeconds` ago.
 */
export async function findSessionUser(
  db: Db,
  sessionId: string,
  limits: SessionLimits & { touchEverySeconds: number },
): Promise<{ id: string; email: string; name: string; role: Role; tenantId: string; tenantName: string } | null> {
  const [row] = await db.$queryRaw<
    { id: string; email: string; name: string; role: Role; tenantId: string; tenantName: string }[]
  >`
    WITH live AS (
      SELECT s."id", s."lastSeenAt", u."id" AS "userId", u."email", u."name", u."role"::text AS "role", u."tenantId"
      FROM "Session" s JOIN "User" u ON u."id" = s."userId" AND u."tenantId" = s."tenantId"
      WHERE s."id" = ${sessionId} AND s."endedAt" IS NULL AND u."active" AND ${withinLimits("s", limits)}
    ), touched AS (
      UPDATE "Session" SET "lastSeenAt" = CURRENT_TIMESTAMP
      WHERE "id" = (SELECT "id" FROM live WHERE "lastSeenAt" < CURRENT_TIMESTAMP - make_interval(secs => ${limits.touchEverySeconds}::int))
    )
    SELECT live."userId" AS "id", live."email", live."name", live."role", live."tenantId", t."name" AS "tenantName"
    FROM live JOIN "Tenant" t ON t."id" = live."tenantId"`;
  return row ?? null;
}

/** Ends the session if it is still live, recording why. */
export async function markSessionEnded(db: Client, sessionId: string, reason: string): Promise<void> {
  await db.session.updateMany({
    where: { id: sessionId, endedAt: null },
    data: { endedAt: new Date(), endedReason: reason },
  });
}

/**
 * Ends every session of the tenant that a password signed in and that has not ended, recording why; returns how many
 * of them were still live (lapsed ones end too, uncounted: nobody was signed in by them).
 */
export async function endTenantPasswordSessions(
  tx: Tx,
  tenantId: string,
  reason: string,
  limits: SessionLimits,
): Promise<number> {
  const [row] = await tx.$queryRaw<{ live: number }[]>`
    WITH ended AS (
      UPDATE "Session" SET "endedAt" = CURRENT_TIMESTAMP, "endedReason" = ${reason}
      WHERE "tenantId" = ${tenantId} AND "signedInVia" = 'password' AND "endedAt" IS NULL
      RETURNING "lastSeenAt", "createdAt")
    SELECT count(*)::int AS "live" FROM ended WHERE ${withinLimits("ended", limits)}`;
  return row.live;
}

/** The tenant's live sessions (at most 500: not ended, idle or past their age), by person, most recently seen first. */
export async function findLiveSessions(db: Db, tenantId: string, limits: SessionLimits) {
  return db.$queryRaw<
    {
      id: string;
      userId: string;
      createdAt: Date;
      lastSeenAt: Date;
      address: string | null;
      userAgent: string | null;
    }[]
  >`
    SELECT s."id", s."userId", s."createdAt", s."lastSeenAt", s."address", s."userAgent" FROM "Session" s
    WHERE s."tenantId" = ${tenantId} AND s."endedAt" IS NULL AND ${withinLimits("s", limits)}
    ORDER BY s."userId", s."lastSeenAt" DESC LIMIT 500`;
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

// Passkeys and step-up proofs (decision 014)
