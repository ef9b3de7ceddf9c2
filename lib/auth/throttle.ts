import { transaction } from "../db";
import { deleteThrottle, lockThrottle, setThrottleFailures, takeBackFailure } from "./sql";

// Sign-in throttling counted in PostgreSQL, so it holds across instances. Every attempt counts as a failure
// when it starts (a parallel flood cannot slip past the count) and a success takes it back. Past its free
// failures a key is locked for a growing time; an attempt while locked is refused before any password check.

const FREE_FAILURES = { account: 3, address: 20 } as const;
const MAX_LOCK_SECONDS = 15 * 60;
// Failures older than this are forgotten: a locked key that stays quiet starts over.
const FORGET_AFTER_SECONDS = 60 * 60;

type Scope = keyof typeof FREE_FAILURES;
export interface ThrottleKeys {
  email: string;
  address: string;
}

const keysOf = ({ email, address }: ThrottleKeys): [Scope, string][] => [
  ["account", `account:${email}`],
  ["address", `address:${address}`],
];

/** Seconds a key is locked after this many failures in a row: 0 within the free ones, then 2, 4, 8 ... 900. */
export function lockSeconds(scope: Scope, failures: number): number {
  const over = failures - FREE_FAILURES[scope];
  return over <= 0 ? 0 : Math.min(MAX_LOCK_SECONDS, 2 ** over);
}

export type Attempt = { allowed: true } | { allowed: false; retryAfterSeconds: number; scope: Scope };
export interface Locked {
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
    const ordered = keysOf(keys).sort((a, b) => a[1].localeCompare(b[1]));
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

/** A success resets the account and takes this attempt back from the address. */
export async function attemptSucceeded(keys: ThrottleKeys): Promise<void> {
  const [[, account], [, address]] = keysOf(keys);
  await transaction(async (tx) => {
    await deleteThrottle(tx, account);
    await takeBackFailure(tx, address);
  });
}
