// The instance's running jobs, where a feature can reach them without importing every job (lib/instance/jobs.ts
// starts them).

export interface Job {
  name: string;
  intervalMs: number;
  timer: NodeJS.Timeout;
  /** The run in progress, if any. */
  running: Promise<unknown> | null;
  runningSince: number | null;
  /** Starts a run now unless one is in progress. */
  run(): void;
}

export interface Jobs {
  list: Job[];
  stopped: boolean;
}

export const globalForJobs = globalThis as unknown as { toolgateJobs?: Jobs };

/**
 * Runs a job of this instance now rather than at its next pass (a replay an admin just asked for), unless a run is in
 * progress or this instance runs no jobs; then the job's own pass, here or on another instance, picks the work up.
 */
export function runJobNow(name: string): void {
  const jobs = globalForJobs.toolgateJobs;
  if (!jobs || jobs.stopped) return;
  jobs.list.find((job) => job.name === name)?.run();
}
