import { db, transaction, type Tx } from "@/lib/db";

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

/**
 * Runs `work` in a transaction and keeps it open, its locks held, until `release()`, as another instance's
 * transaction between its writes and its commit: `pid` is its backend (for `waitForLockWaiter`), `done` settles once
 * it has committed.
 */
export async function holdOpen(
  work: (tx: Tx) => Promise<unknown>,
): Promise<{ pid: number; release: () => void; done: Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: (pid: number) => void;
  const holding = new Promise<number>((resolve) => (held = resolve));
  const done = transaction(async (tx) => {
    await work(tx);
    const [row] = await tx.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS "pid"`;
    held(row.pid);
    await released;
  });
  // A `work` that throws ends the transaction before it holds anything: its error, not a wait for ever.
  const pid = await Promise.race([holding, done.then(() => holding)]);
  return { pid, release, done };
}
