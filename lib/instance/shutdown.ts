import { closeDb } from "../db";
import { closeUpstreams } from "../upstream/servers/client";
import { stopJobs } from "./jobs";
import { stopLive } from "../live";
import { logError, logInfo } from "../observe/log";
import { stopTracing } from "../observe/tracing";
import { env } from "../env";

// Graceful shutdown of an app instance on SIGTERM (or SIGINT). Next.js's own handler stops accepting
// connections, waits for the requests in flight and then calls process.exit; this module marks the instance
// not ready (so a load balancer stops sending it traffic), stops the background jobs at once, ends open
// live-view streams (they would hold the server open), and closes the database pool (and flushes the traces)
// after the last request and before the exit. SHUTDOWN_TIMEOUT_MS bounds the whole of it.

interface Shutdown {
  installed: boolean;
  /** When draining began; null while serving. */
  since: number | null;
  drainHooks: Set<() => void>;
}

// On globalThis: Next.js may load this module once per bundle, and the readiness route must see the signal.
const globalForShutdown = globalThis as unknown as { toolgateShutdown?: Shutdown };

function registry(): Shutdown {
  return (globalForShutdown.toolgateShutdown ??= { installed: false, since: null, drainHooks: new Set() });
}

export const shuttingDown = (): boolean => registry().since !== null;

/** Calls `hook` when the instance begins to drain (a long-lived response ends itself); returns the unregister function. */
export function onDrain(hook: () => void): () => void {
  const { drainHooks } = registry();
  drainHooks.add(hook);
  return () => drainHooks.delete(hook);
}

export function installGracefulShutdown(): void {
  const shared = registry();
  if (shared.installed) return;
  shared.installed = true;
  process.once("SIGTERM", () => begin("SIGTERM"));
  process.once("SIGINT", () => begin("SIGINT"));
}

function begin(signal: NodeJS.Signals): void {
  const shared = registry();
  const startedAt = Date.now();
  shared.since = startedAt;
  const timeoutMs = env().SHUTDOWN_TIMEOUT_MS;
  logInfo("shutdown.begin", { signal, timeoutMs });
  for (const hook of shared.drainHooks) hook();
  const jobsStopped = stopJobs().catch((error) => logError("shutdown.jobs", error));

  const exit = process.exit.bind(process);
  let exiting = false;
  const finish = async (code: number, reason: string) => {
    if (exiting) return;
    exiting = true;
    await jobsStopped;
    await Promise.all([closeDb(), stopLive(), stopTracing(), closeUpstreams()]).catch((error) =>
      logError("shutdown.close", error),
    );
    logInfo("shutdown.done", { reason, code, ms: Date.now() - startedAt });
    exit(code);
  };
  // Next.js calls process.exit once its last request has finished: the moment the pool can close.
  process.exit = ((code?: number) =>
    void finish(typeof code === "number" ? code : 0, "requests finished")) as typeof process.exit;
  setTimeout(() => {
    logError("shutdown.timeout", new Error(`requests still in flight after ${timeoutMs} ms`));
    void finish(1, "timeout");
  }, timeoutMs).unref();
}
