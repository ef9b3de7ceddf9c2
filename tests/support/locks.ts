import { db } from "@/lib/db";

/**
 * Returns once a statement waits for a lock the backend `holderPid` holds (at most 10 s). Only a waiter blocked by
 * this holder counts: test files share the database, so another file's waiter must not end the wait early.
 */
export async function waitForLockWaiter(holderPid: number, lock: string): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    const [waiting] = await db.$queryRaw<{ count: number }[]>`
      SELECT count(*)::int AS "count" FROM pg_stat_activity WHERE ${holderPid}::int = ANY(pg_blocking_pids(pid))`;
    if (waiting.count > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no statement waited for ${lock}`);
}
