import { db } from "@/lib/db";

/**
 * Returns the backend of a statement that waits for a lock the backend `holderPid` holds, once there is one (at most
 * 10 s). Only a waiter blocked by this holder counts: test files share the database, so another file's waiter must
 * not end the wait early.
 */
export async function waitForLockWaiter(holderPid: number, lock: string): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const [waiting] = await db.$queryRaw<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity WHERE ${holderPid}::int = ANY(pg_blocking_pids(pid)) LIMIT 1`;
    if (waiting) return waiting.pid;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no statement waited for ${lock}`);
}
