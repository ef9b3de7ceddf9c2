import { db } from "../db";
import { jobsProblem } from "./jobs";
import { logError, logInfo } from "../observe/log";
import { pendingMigrations } from "../db/migrate";
import { shuttingDown } from "./shutdown";
import { findAppliedMigrations } from "./sql";

// What GET /api/ready reports: whether this instance should be sent traffic. GET /api/health asks nothing of
// this module: it answers as long as the process does. What fails is always logged, as the route shows it to
// operators only.

export type Check = "database" | "migrations" | "jobs" | "shutdown";

export interface Readiness {
  ready: boolean;
  /** "ok", "off" (jobs disabled by configuration), "not checked", or what is wrong. */
  checks: Record<Check, string>;
  failing: Check[];
}

const DATABASE_TIMEOUT_MS = 2000;

function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

const NOT_CHECKED = "not checked (database unreachable)";
const passing = new Set(["ok", "off", NOT_CHECKED]);

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

// A load balancer asks every few seconds: the log says when the answer changes, not at every probe. The checks this
// instance last logged as not ready, or null while it is ready.
let loggedNotReady: string | null = null;

export async function readiness(): Promise<Readiness> {
  const checks: Record<Check, string> = { database: "ok", migrations: "ok", jobs: "ok", shutdown: "ok" };
  let unreachable: unknown = null;
  try {
    const pending = await within(
      DATABASE_TIMEOUT_MS,
      "the database",
      pendingMigrations(() => findAppliedMigrations(db)),
    );
    if (pending.length) checks.migrations = `${pending.length} not applied: ${pending.join(", ")}`;
  } catch (error) {
    const text = message(error);
    // A database without the migrations table answers, so the failing part is the migrations, not the database.
    if (/_prisma_migrations/.test(text)) checks.migrations = "no migration has been applied";
    else {
      unreachable = error;
      checks.database = "database unreachable";
      checks.migrations = NOT_CHECKED;
    }
  }
  const jobs = jobsProblem();
  if (jobs) checks.jobs = jobs;
  if (shuttingDown()) checks.shutdown = "draining: this instance is shutting down";
  const failing = (Object.keys(checks) as Check[]).filter((check) => !passing.has(checks[check]));
  const state = failing.length ? JSON.stringify(checks) : null;
  if (state !== loggedNotReady) {
    // The driver's words name hosts, users and ports: they go to the log, never into an answer.
    if (unreachable) logError("ready.database-unreachable", unreachable);
    if (state) logInfo("ready.not-ready", { failing, checks });
    else logInfo("ready.ready-again", { checks });
    loggedNotReady = state;
  }
  return { ready: failing.length === 0, checks, failing };
}
