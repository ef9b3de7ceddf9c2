import { appendAuditLog } from "../audit/sql";
import { db, transaction } from "../db";
import { deleteThrottle, lockThrottle, setThrottleFailures, takeBackFailure } from "./sql";

// Password throttling counted in PostgreSQL, so it holds across instances. Every attempt counts as a failure
// when it starts (a parallel flood cannot slip past the count) and a success takes it back. Past its free
// failures a key is locked for a growing time; an attempt while locked is refused before any password check.
// Two budgets that never share a key: the anonymous sign-in (the account's email and the client's address), and
// the password typed again inside a signed-in session (step-up, password change: the session and the person), so
// failing sign-ins from outside cannot lock a signed-in person out of their step-up.

const FREE_FAILURES = { account: 3, address: 20, session: 3, person: 10 } as const;
const MAX_LOCK_SECONDS = 15 * 60;
// Failures older than this are forgotten: a locked key that stays quiet starts over.
const FORGET_AFTER_SECONDS = 60 * 60;

type Scope = keyof typeof FREE_FAILURES;
/** The keys one attempt counts on: the first is reset by a success, the second gives this attempt back. */
export type ThrottleKeys = readonly [narrow: readonly [Scope, string], wide: readonly [Scope, string]];

/** The sign-in form's budget: the email tried and the address it came from. */
export function signInKeys({ email, address }: { email: string; address: string }): ThrottleKeys {
  return [
    ["account", `account:${email}`],
    ["address", `address:${address}`],
  ];
}

/** The budget of a password typed again by someone signed in: their session, and the person across sessions. */
export function inSessionKeys({ userId, sessionId }: { userId: string; sessionId: string }): ThrottleKeys {
  return [
    ["session", `session:${sessionId}`],
    ["person", `person:${userId}`],
  ];
}

/** Whose a throttled budget is, for its audit rows. */
export interface ThrottledPerson {
  tenantId: string;
  actorId: string;
}

/**
 * `beginAttempt` whose locks are evidence: each lock it sets is an audit-log row `action` with the key's scope, the
 * failures and the seconds locked besides `detail` (a sign-in's lock, and the in-session budget's: wrong passwords
 * typed in a signed-in session may be a stolen cookie guessing). `who` is asked only when a key locks.
 */
export async function beginAuditedAttempt(
  keys: ThrottleKeys,
  audit: {
    action: "sign-in.throttled" | "step-up.throttled" | "password.throttled";
    detail: object;
    who: () => ThrottledPerson | Promise<ThrottledPerson>;
  },
): Promise<Attempt> {
  const attempt = await beginAttempt(keys);
  if (!attempt.locked?.length) return attempt;
  const { tenantId, actorId } = await audit.who();
  for (const lock of attempt.locked)
    await appendAuditLog(db, {
      tenantId,
      actorId,
      action: audit.action,
      detail: { scope: lock.scope, ...audit.detail, failures: lock.failures, locked_seconds: lock.seconds },
    });
  return attempt;
}

/** Seconds a key is locked after this many failures in a row: 0 within the free ones, then 2, 4, 8 ... 900. */
export function lockSeconds(scope: Scope, failures: number): number {
  const over = failures - FREE_FAILURES[scope];
  return over <= 0 ? 0 : Math.min(MAX_LOCK_SECONDS, 2 ** over);
}

export type Attempt = { allowed: true } | { allowed: false; retryAfterSeconds: number; scope: Scope };
interface Locked {
  scope: Scope;
  failures: number;
  seconds: number;
}

/**
 * Starts an attempt: refused while either key is locked; otherwise counted on both keys, locking those it takes
 * past their free failures (returned in `locked`, for the audit log).
 */
export async function beginAttempt(keys: ThrottleKeys): Promise<Attempt & { locked?: Locked[] }> {
  return transaction(async (tx) => {
    const ordered = [...keys].sort((a, b) => a[1].localeCompare(b[1]));
    const rows: { scope: Scope; key: string; failures: number; retryAfter: number }[] = [];
    for (const [scope, key] of ordered) {
      const row = await lockThrottle(tx, key, FORGET_AFTER_SECONDS);
      rows.push({ scope, key, failures: row.stale ? 0 : row.failures, retryAfter: row.retryAfter });
    }
    const blocked = rows.filter((row) => row.retryAfter > 0).sort((a, b) => b.retryAfter - a.retryAfter)[0];
    if (blocked) return { allowed: false, retryAfterSeconds: blocked.retryAfter, scope: blocked.scope };
    const locked: Locked[] = [];
    for (const row of rows) {
      const failures = row.failures + 1;
      const seconds = lockSeconds(row.scope, failures);
      if (seconds > 0) locked.push({ scope: row.scope, failures, seconds });
      await setThrottleFailures(tx, row.key, failures, seconds);
    }
    return { allowed: true, locked };
  });
}

/** A success resets the narrow key (the account, the session) and takes this attempt back from the wide one. */
export async function attemptSucceeded([[, narrow], [, wide]]: ThrottleKeys): Promise<void> {
  await transaction(async (tx) => {
    await deleteThrottle(tx, narrow);
    await takeBackFailure(tx, wide);
  });
}
