import { applyDueChanges } from "../admin/changes/two-admin";
import { runQueuedReplays } from "../admin/rules/replay";
import { expireDue } from "../approvals/expiry/expire";
import { warnExpiring } from "../approvals/expiry/warn";
import { sealLogs } from "../audit/seal";
import { db } from "../db";
import { pruneAutoExposure, pruneRateBuckets } from "../gateway";
import { pruneLiveWatches } from "../live";
import { logError } from "../observe/log";
import { deliverOutbox } from "../mail/delivery";
import { reconcileRefunds } from "../payments/reconcile/reconcile";
import { env } from "../env";
import { syncAllServers } from "../upstream/servers/servers";
import { globalForJobs, type Job } from "../job-registry";

// Background work of a running app instance. Every job is safe to run on several instances at once: the
// outbox and the admin-change job claim rows with SKIP LOCKED, settling and expiry move only rows still in their old state, pruning
// drops only ended rate windows, expired live-view watches and exposure past its 24-hour window; one sealer at a
// time holds an advisory lock and seals only rows whose transactions have finished.

function every(intervalMs: number, name: string, work: () => Promise<unknown>): Job {
  const state: Omit<Job, "timer"> = {
    name,
    intervalMs,
    running: null,
    runningSince: null,
    run() {
      if (state.running) return;
      state.runningSince = Date.now();
      state.running = work()
        .catch((error) => logError(`job.${name}`, error))
        .finally(() => {
          state.running = null;
          state.runningSince = null;
        });
    },
  };
  const timer = setInterval(() => state.run(), intervalMs);
  timer.unref();
  return Object.assign(state, { timer });
}

export const jobsEnabled = () => env().TOOLGATE_JOBS !== "off";

export function startJobs(): void {
  if (globalForJobs.toolgateJobs || !jobsEnabled()) return;
  const settings = env();
  globalForJobs.toolgateJobs = {
    stopped: false,
    list: [
      every(settings.OUTBOX_INTERVAL_MS, "outbox", () => deliverOutbox()),
      every(settings.RECONCILE_INTERVAL_MS, "reconcile", () =>
        reconcileRefunds({ backoffMs: settings.RECONCILE_BACKOFF_MS }),
      ),
      every(settings.EXPIRY_INTERVAL_MS, "expiry", () => expireDue()),
      every(settings.EXPIRY_INTERVAL_MS, "expiry-warning", () => warnExpiring()),
      every(settings.EXPIRY_INTERVAL_MS, "admin-changes", () => applyDueChanges()),
      every(settings.EXPIRY_INTERVAL_MS, "rule-replays", () => runQueuedReplays()),
      every(settings.RATE_PRUNE_INTERVAL_MS, "rate-prune", () => pruneRateBuckets(db)),
      every(settings.WATCH_PRUNE_INTERVAL_MS, "watch-prune", () => pruneLiveWatches()),
      every(settings.SEAL_INTERVAL_MS, "seal", () => sealLogs()),
      every(settings.EXPOSURE_PRUNE_INTERVAL_MS, "exposure-prune", () => pruneAutoExposure(db)),
      every(settings.UPSTREAM_SYNC_INTERVAL_MS, "upstream-sync", () => syncAllServers()),
    ],
  };
}

/** Stops scheduling runs and waits for the runs in progress to end. */
export async function stopJobs(): Promise<void> {
  const jobs = globalForJobs.toolgateJobs;
  if (!jobs) return;
  jobs.stopped = true;
  for (const job of jobs.list) clearInterval(job.timer);
  await Promise.all(jobs.list.map((job) => job.running));
}

/**
 * Whether this instance's jobs run as configured: "off" when TOOLGATE_JOBS=off, otherwise the problem
 * (not started, stopped, or a run stuck for longer than three intervals and a minute) or null.
 */
export function jobsProblem(now = Date.now()): string | null | "off" {
  if (!jobsEnabled()) return "off";
  const jobs = globalForJobs.toolgateJobs;
  if (!jobs) return "background jobs have not started";
  if (jobs.stopped) return "background jobs are stopped (shutting down)";
  if (!env().AUDIT_SEAL_KEY) return "AUDIT_SEAL_KEY is not set: the audit logs are not being sealed";
  const stuck = jobs.list.find(
    (job) => job.runningSince !== null && now - job.runningSince > 3 * job.intervalMs + 60_000,
  );
  return stuck
    ? `background job ${stuck.name} has been running for ${Math.round((now - stuck.runningSince!) / 1000)} s`
    : null;
}
