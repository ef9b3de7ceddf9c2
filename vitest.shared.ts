import path from "node:path";
import { defineConfig } from "vitest/config";

/** One Vitest setup (real PostgreSQL, fake provider, SMTP sink) for both suites; they differ in what they run. */
export function suiteConfig(test: { include: string[]; exclude?: string[]; maxWorkers: number; testTimeout: number }) {
  return defineConfig({
    resolve: {
      alias: {
        "@": path.resolve(import.meta.dirname),
        "server-only": path.resolve(import.meta.dirname, "tests/support/server-only.ts"),
      },
    },
    test: {
      ...test,
      exclude: [...(test.exclude ?? []), "node_modules/**"],
      globalSetup: ["tests/support/global-setup.ts"],
      setupFiles: ["tests/support/env.ts"],
      pool: "forks",
      hookTimeout: 120_000,
    },
  });
}
