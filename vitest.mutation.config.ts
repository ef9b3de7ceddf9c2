import { suiteConfig } from "./vitest.shared";

// What Stryker runs against each mutant of the gateway: the unit and integration tests, without three folders and a file
// (tests/README.md maps them). With per-test coverage a test runs for every mutant it covers, so these would
// multiply the run without guarding the stages' logic:
// - tests/stress/: the long concurrency, chaos, crash, database-down and whole-pipeline fuzz runs; they cover every
//   line and guard the executor;
// - tests/agent-api/waits/: held calls waited on over HTTP, MCP and tasks, a second or more per test; they guard the
//   waiter and the MCP front, outside the gateway;
// - tests/mail/: delivery through the outbox with its retries and backoff, outside the gateway;
// and tests/openapi/client.integration.test.ts, whose check that the checked-in client types match the served
// document fails on Stryker's instrumented code (the document it serves there differs) before any mutant runs.
export default suiteConfig({
  include: ["tests/**/*.test.ts"],
  exclude: [
    "tests/hardening/**",
    "tests/stress/**",
    "tests/agent-api/waits/**",
    "tests/mail/**",
    "tests/openapi/client.integration.test.ts",
  ],
  maxWorkers: 2,
  testTimeout: 30_000,
});
