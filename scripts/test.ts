import { spawnSync } from "node:child_process";
import path from "node:path";
import { freshDatabase, startCluster } from "./pg-cluster";

// `npm test`: the formatter's check, the linter and the type checker, then the whole suite against one throwaway PostgreSQL (or
// TEST_DATABASE_URL): Vitest unit and integration tests, the seeded-defect check, then the production build, a smoke
// run of every benchmark against it (each on its own throwaway cluster), the hardening tests, and Playwright in Chromium.

const root = process.cwd();
const bin = (pkg: string, file: string) => path.join(root, "node_modules", pkg, file);

const cluster = process.env.TEST_DATABASE_URL ? null : await startCluster();
const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? cluster!.url;
// The browser tests get their own database, seeded exactly as `npm run db:seed` seeds a new install.
const e2eDatabaseUrl = await freshDatabase(testDatabaseUrl, "toolgate_e2e");
const env = {
  ...process.env,
  TEST_DATABASE_URL: testDatabaseUrl,
  E2E_DATABASE_URL: e2eDatabaseUrl,
  CI: process.env.CI ?? "1",
};

const steps: [string, string[]][] = [
  ["format (Prettier's check; `npm run format` writes)", [bin("prettier", "bin/prettier.cjs"), "--check", "."]],
  ["lint (ESLint with the dependency-direction rules)", [bin("eslint", "bin/eslint.js"), "."]],
  ["typecheck", [bin("typescript", "bin/tsc"), "--noEmit"]],
  ["vitest", [bin("vitest", "vitest.mjs"), "run"]],
  ["seeded defects", [bin("tsx", "dist/cli.mjs"), "scripts/defects.ts"]],
  ["next build", [bin("next", "dist/bin/next"), "build"]],
  [
    "bench smoke (every benchmark for a handful of rounds, no timing asserted, no table written)",
    [bin("tsx", "dist/cli.mjs"), "bench/run.ts", "--smoke"],
  ],
  [
    "hardening (two instances of the build)",
    [bin("vitest", "vitest.mjs"), "run", "--config", "vitest.hardening.config.ts"],
  ],
  ["playwright", [bin("@playwright/test", "cli.js"), "test"]],
];

// `npm test -- vitest playwright` runs only the named steps.
const only = process.argv.slice(2);
const selected = only.length ? steps.filter(([name]) => only.some((wanted) => name.includes(wanted))) : steps;

let failed: string | null = null;
try {
  for (const [name, args] of selected) {
    const started = Date.now();
    console.log(`\n=== ${name} ===`);
    const run = spawnSync(process.execPath, args, { stdio: "inherit", env, cwd: root });
    console.log(
      `=== ${name}: ${run.status === 0 ? "passed" : "FAILED"} in ${Math.round((Date.now() - started) / 1000)} s ===`,
    );
    if (run.status !== 0) {
      failed = name;
      break;
    }
  }
} finally {
  cluster?.stop();
}
if (failed) {
  console.error(`\nthe test suite failed at: ${failed}`);
  process.exit(1);
}
console.log("\nthe whole test suite passed");
