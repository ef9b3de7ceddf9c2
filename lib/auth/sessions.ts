import "server-only";
import { db } from "../db";
import { env } from "../env";
import type { Role } from "../generated/prisma/client";
import { newId } from "../ids";
import { isWellFormedId } from "../security/input";

// Sessions are rows: the cookie (a next-auth JWT) carries the row's id and is checked against it on every
// request, so ending the row ends the session everywhere its cookie is presented.

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  tenantId: string;
}

// lastSeenAt is written at most this often per session, so reading a page is not a write each time.
const TOUCH_EVERY_SECONDS = 60;

export async function startSession(
  user: { id: string; tenantId: string },
  client: { address: string; userAgent: string },
): Promise<string> {
  const id = newId("ses");
  await db.session.create({
    data: {
      id,
      userId: user.id,
      tenantId: user.tenantId,
      address: client.address,
      userAgent: client.userAgent.slice(0, 300),
    },
    select: { id: true },
  });
  return id;
}

/**
 * The person a session stands for, or null when the session has ended, sat idle past SESSION_IDLE_SECONDS, is
 * older than SESSION_MAX_SECONDS, or its person is no longer active. One statement, which also marks it seen.
 */
export async function sessionUser(sessionId: string | undefined): Promise<SessionUser | null> {
  if (!sessionId || !isWellFormedId(sessionId)) return null;
  const { SESSION_IDLE_SECONDS: idle, SESSION_MAX_SECONDS: max } = env();
  const [row] = await db.$queryRaw<SessionUser[]>`
    WITH live AS (
      SELECT s."id", s."lastSeenAt", u."id" AS "userId", u."email", u."name", u."role"::text AS "role", u."tenantId"
      FROM "Session" s JOIN "User" u ON u."id" = s."userId" AND u."tenantId" = s."tenantId"
      WHERE s."id" = ${sessionId} AND s."endedAt" IS NULL AND u."active"
        AND s."lastSeenAt" > CURRENT_TIMESTAMP - make_interval(secs => ${idle}::int)
        AND s."createdAt" > CURRENT_TIMESTAMP - make_interval(secs => ${max}::int)
    ), touched AS (
      UPDATE "Session" SET "lastSeenAt" = CURRENT_TIMESTAMP
      WHERE "id" = (SELECT "id" FROM live WHERE "lastSeenAt" < CURRENT_TIMESTAMP - make_interval(secs => ${TOUCH_EVERY_SECONDS}::int))
    )
    SELECT "userId" AS "id", "email", "name", "role", "tenantId" FROM live`;
  return (row as SessionUser | undefined) ?? null;
}

export async function endSession(sessionId: string | undefined, reason: string): Promise<void> {
  if (!sessionId || !isWellFormedId(sessionId)) return;
  await db.session.updateMany({
    where: { id: sessionId, endedAt: null },
    data: { endedAt: new Date(), endedReason: reason },
  });
}

export async function liveSessions(tenantId: string) {
  return db.session.findMany({
    where: { tenantId, endedAt: null },
    orderBy: [{ userId: "asc" }, { lastSeenAt: "desc" }],
    take: 500,
    select: { id: true, userId: true, createdAt: true, lastSeenAt: true, address: true, userAgent: true },
  });
}
