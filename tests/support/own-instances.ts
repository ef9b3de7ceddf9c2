import { afterAll, beforeAll } from "vitest";
import { freePort } from "@/scripts/pg-cluster";
import { startInstance, type AppInstance } from "./app-instances";

// The fixture for tests of the production build (tests/hardening): instances started once per file, on ports the
// kernel hands out, never a port picked by hand. Kept apart from app-instances.ts, which the benchmarks import
// outside Vitest.

/** Distinct ports the kernel hands out as free (each a listen on port 0, closed again). */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/**
 * `count` instances of the build for the file's tests: started before them, stopped after them. Each gets the test
 * database and `env(urls, index)`, read when they start (after the hooks registered before this call, so it may use
 * what those made); `urls` are all the instances' addresses, for an issuer. The handles are filled in once the
 * instances are up, so they can be named at once: `const [app] = ownInstances(1)`.
 */
export function ownInstances(
  count: number,
  env: (urls: string[], index: number) => Record<string, string> = () => ({}),
): AppInstance[] {
  const instances = Array.from({ length: count }, () => ({}) as AppInstance);
  beforeAll(async () => {
    const ports = await freePorts(count);
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    const started = await Promise.allSettled(
      ports.map(async (port, index) =>
        Object.assign(
          instances[index],
          await startInstance(port, { DATABASE_URL: process.env.DATABASE_URL!, ...env(urls, index) }),
        ),
      ),
    );
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
  }, 120_000);
  afterAll(async () => {
    await Promise.all(instances.filter((instance) => instance.stop).map((instance) => instance.stop()));
  });
  return instances;
}

/** The address of the instance whose turn the `index`th request is, spreading requests over all of them in turn. */
export const inTurn = (instances: AppInstance[], index: number) => instances[index % instances.length].url;
