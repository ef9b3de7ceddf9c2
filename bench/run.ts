import { spawnSync } from "node:child_process";
import path from "node:path";

// `npm run bench`: every benchmark in turn, each writing its table into docs/BENCHMARKS.md. Builds the app
// first, so the HTTP benchmark never measures a build older than the code. Exits non-zero if any benchmark
// could not run.

const tsx = path.join("node_modules", "tsx", "dist", "cli.mjs");
const build = spawnSync(process.execPath, [path.join("node_modules", "next", "dist", "bin", "next"), "build"], {
  stdio: "inherit",
});
if (build.status !== 0) process.exit(build.status ?? 1);
for (const bench of ["overhead", "http", "durable", "scale", "sign-in-flood", "waiters"]) {
  console.log(`\n=== bench ${bench} ===`);
  const run = spawnSync(process.execPath, [tsx, "--conditions=react-server", `bench/${bench}.ts`], {
    stdio: "inherit",
    env: process.env,
  });
  if (run.status !== 0) {
    console.error(`bench ${bench} failed`);
    process.exit(run.status ?? 1);
  }
}
