import { spawnSync } from "node:child_process";
import path from "node:path";

// `npm run bench`: every benchmark in turn, each writing its table into docs/BENCHMARKS.md. Builds the app
// first, so the HTTP benchmarks never measure a build older than the code. Exits non-zero if any benchmark
// could not run.
// `--smoke` is the test command's step (after its own build): every benchmark for a handful of rounds
// (BENCH_SMOKE=1), no timing asserted and no table written; it runs them all and fails if any failed. Files named
// after the flags run instead of the benchmarks (the test of this step runs fixtures).

const BENCHMARKS = ["overhead", "http", "durable", "scale", "sign-in-flood", "waiters", "rules", "upstream"];
const SMOKE_LIMIT_MS = 180_000;

const smoke = process.argv.includes("--smoke");
const named = process.argv.slice(2).filter((arg) => arg !== "--smoke");
const files = named.length > 0 ? named : BENCHMARKS.map((name) => path.join("bench", `${name}.ts`));
const tsx = path.join("node_modules", "tsx", "dist", "cli.mjs");

if (!smoke) {
  const build = spawnSync(process.execPath, [path.join("node_modules", "next", "dist", "bin", "next"), "build"], {
    stdio: "inherit",
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const failed: string[] = [];
for (const file of files) {
  const started = Date.now();
  console.log(`\n=== bench ${file}${smoke ? " (smoke)" : ""} ===`);
  const run = spawnSync(process.execPath, [tsx, "--conditions=react-server", file], {
    stdio: "inherit",
    env: smoke ? { ...process.env, BENCH_SMOKE: "1" } : process.env,
    ...(smoke ? { timeout: SMOKE_LIMIT_MS, killSignal: "SIGTERM" as const } : {}),
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (run.status === 0) {
    console.log(`=== bench ${file}: ran in ${seconds} s ===`);
    continue;
  }
  const why = run.status === null ? `stopped by ${run.signal} after ${seconds} s` : `exit code ${run.status}`;
  console.error(`=== bench ${file} FAILED (${why}) ===`);
  failed.push(file);
  if (!smoke) process.exit(run.status ?? 1);
}
if (failed.length > 0) {
  console.error(`\nbenchmarks that failed: ${failed.join(", ")}`);
  process.exit(1);
}
