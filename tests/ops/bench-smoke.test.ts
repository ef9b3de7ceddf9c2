import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The test command's benchmark step (`bench/run.ts --smoke`, in scripts/test.ts) must fail when a benchmark throws,
// so a change that breaks a benchmark fails the tests instead of the next person who measures.

function smokeRun(...files: string[]) {
  const run = spawnSync(
    process.execPath,
    [path.join("node_modules", "tsx", "dist", "cli.mjs"), "bench/run.ts", "--smoke", ...files],
    { encoding: "utf8", env: { ...process.env, BENCH_SMOKE: "" }, timeout: 60_000 },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("the benchmarks' smoke step", () => {
  it("fails when a benchmark throws, names it, and still runs the others", () => {
    const run = smokeRun("tests/fixtures/bench-throws.ts", "tests/fixtures/bench-passes.ts");
    expect(run.status).toBe(1);
    expect(run.output).toContain("fixture benchmark: the gateway refund answered approval.required");
    expect(run.output).toContain("=== bench tests/fixtures/bench-throws.ts FAILED (exit code 1) ===");
    expect(run.output).toContain("fixture benchmark ran, smoke on");
    expect(run.output).toContain("benchmarks that failed: tests/fixtures/bench-throws.ts");
  });

  it("passes when every benchmark runs, each in smoke mode", () => {
    const run = smokeRun("tests/fixtures/bench-passes.ts");
    expect(run.output).toContain("fixture benchmark ran, smoke on");
    expect(run.status).toBe(0);
  });
});
