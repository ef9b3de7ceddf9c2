import { expireDue, warnExpiring } from "./approvals/expiry";
import { sql } from "./db";
import { pruneRateBuckets } from "./gateway/rate";
import { pruneLiveWatches } from "./live";
import { logError } from "./log";
import { deliverOutbox } from "./mail/outbox";
import { reconcileRefunds } from "./payments/refunds";

// Background work of a running app instance. Every job is safe to run on several instances at once: the
// outbox claims rows with SKIP LOCKED, settling and expiry move only rows still in their old state, pruning
// drops only ended rate windows and expired live-view watches.

const globalForJobs = globalThis as unknown as { toolgateJobs?: NodeJS.Timeout[] };

function every(ms: number, name: string, job: () => Promise<unknown>): NodeJS.Timeout {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    job()
      .catch((error) => logError(`job.${name}`, error))
      .finally(() => {
        running = false;
      });
  }, ms);
  timer.unref();
  return timer;
}

export function startJobs(): void {
  if (globalForJobs.toolgateJobs || process.env.TOOLGATE_JOBS === "off") return;
  globalForJobs.toolgateJobs = [
    every(Number(process.env.OUTBOX_INTERVAL_MS ?? 2000), "outbox", () => deliverOutbox()),
    every(Number(process.env.RECONCILE_INTERVAL_MS ?? 30_000), "reconcile", () => reconcileRefunds()),
    every(Number(process.env.EXPIRY_INTERVAL_MS ?? 10_000), "expiry", () => expireDue()),
    every(Number(process.env.EXPIRY_INTERVAL_MS ?? 10_000), "expiry-warning", () => warnExpiring()),
    every(Number(process.env.RATE_PRUNE_INTERVAL_MS ?? 60_000), "rate-prune", () => pruneRateBuckets(sql)),
    every(Number(process.env.WATCH_PRUNE_INTERVAL_MS ?? 60_000), "watch-prune", () => pruneLiveWatches()),
  ];
}
