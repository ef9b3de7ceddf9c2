import { suiteConfig } from "./vitest.shared.ts";

// What Stryker runs against each mutant of the gateway: the unit and integration tests of the sequence,
// without the long concurrency, chaos, crash and whole-pipeline fuzz runs: they cover every line, so with
// per-test coverage each would run for every mutant, and they guard the executor rather than the stages' logic.
export default suiteConfig({
  include: ["tests/**/*.test.ts"],
  exclude: [
    "tests/hardening/**",
    "tests/provider-chaos.integration.test.ts",
    "tests/crash.integration.test.ts",
    "tests/host-down.integration.test.ts",
    "tests/seed.integration.test.ts",
    "tests/fuzz-pipeline.integration.test.ts",
    "tests/concurrency.integration.test.ts",
    "tests/outbox.integration.test.ts",
    "tests/admin.integration.test.ts",
    // Waits of a second or more per test (held calls waited on over HTTP, MCP and tasks): they guard the waiter and
    // the MCP front, outside the gateway, and would run for every mutant of the pipeline they pass through.
    "tests/wait.integration.test.ts",
    "tests/mcp.integration.test.ts",
    "tests/mcp-uncertain.integration.test.ts",
    "tests/mcp-tasks.integration.test.ts",
  ],
  maxWorkers: 2,
  testTimeout: 30_000,
});
