import { db, type Db } from "../db";
import { env } from "../env";
import type { Role } from "../generated/prisma/client";
import { newId } from "../ids";
import { isWellFormedId } from "../security/input";
import {
  findLiveSessions,
  findSessionUser,
  insertSession,
  markSessionEnded,
  type SessionLimits,
  type SignedInVia,
} from "./sql";

// Sessions are rows: the cookie (a next-auth JWT) carries the row's id and is checked against it on every
// request, so ending the row ends the session everywhere its cookie is presented.

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  tenantId: string;
  tenantName: string;
}

// lastSeenAt is written at most this often per session, so reading a page is not a write each time.
const TOUCH_EVERY_SECONDS = 60;

/** Starts a session for the person; `client`: the transaction it is part of, if any. */
export async function startSession(
  user: { id: string; tenantId: string },
  browser: { address: string; userAgent: string },
  signedInVia: SignedInVia = "password",
  client: Db = db,
): Promise<string> {
  const id = newId("ses");
  await insertSession(client, {
    id,
    userId: user.id,
    tenantId: user.tenantId,
    address: browser.address,
    userAgent: browser.userAgent.slice(0, 300),
    signedInVia,
  });
  return id;
}

/**
 * The person a session stands for, or null when the session has ended, sat idle past SESSION_IDLE_SECONDS, is
 * older than SESSION_MAX_SECONDS, or its person is no longer active. One statement, which also marks it seen
 * unless `touch` is false (a check an open stream repeats must not keep an idle session alive).
 */
export async function sessionUser(
  sessionId: string | undefined,
  { touch = true }: { touch?: boolean } = {},
): Promise<SessionUser | null> {
  if (!sessionId || !isWellFormedId(sessionId)) return null;
  const limits = sessionLimits();
  const row = await findSessionUser(db, sessionId, {
    ...limits,
    // A row unseen for SESSION_MAX_SECONDS is no longer live, so this never touches one.
    touchEverySeconds: touch ? TOUCH_EVERY_SECONDS : limits.maxSeconds,
  });
  return row;
}

export async function endSession(sessionId: string | undefined, reason: string): Promise<void> {
  if (!sessionId || !isWellFormedId(sessionId)) return;
  await markSessionEnded(db, sessionId, reason);
}

export async function liveSessions(tenantId: string) {
  return findLiveSessions(db, tenantId, sessionLimits());
}

/** How long a session lives, as the environment sets it. */
export const sessionLimits = (): SessionLimits => ({
  idleSeconds: env().SESSION_IDLE_SECONDS,
  maxSeconds: env().SESSION_MAX_SECONDS,
});
