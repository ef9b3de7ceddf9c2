import type { ChildProcess } from "node:child_process";

// Waiting for a process we started to serve, shared by the tests and the Playwright specs (it imports nothing from
// lib/, so Playwright can load it).

export interface ReadyOptions {
  /** The process that is to serve, named in the errors: waiting stops at once if it exits. */
  child: ChildProcess;
  name: string;
  timeoutMs: number;
  intervalMs: number;
  /** What the process wrote so far, added to the errors. */
  output?: () => string;
}

/** Asks `ready` every `intervalMs` until it says yes (a throw counts as no); fails if the child exits or time runs out. */
export async function untilReady(ready: () => Promise<boolean>, options: ReadyOptions): Promise<void> {
  const { child, name, timeoutMs, intervalMs, output = () => "" } = options;
  const deadline = Date.now() + timeoutMs;
  const written = () => (output() ? `:\n${output()}` : "");
  for (;;) {
    if (await ready().catch(() => false)) return;
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}${written()}`);
    if (Date.now() > deadline) throw new Error(`${name} was not ready within ${timeoutMs / 1000} s${written()}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Waits until GET `url` answers 2xx, as `untilReady` waits. */
export function untilAnswers(url: string, options: ReadyOptions): Promise<void> {
  return untilReady(async () => {
    const response = await fetch(url);
    await response.body?.cancel();
    return response.ok;
  }, options);
}
