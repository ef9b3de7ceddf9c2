import { suiteConfig } from "./vitest.shared";

// What Stryker runs against each mutant of the gateway: the unit and integration tests of the sequence,
// without the long concurrency, chaos and crash runs (they guard the executor, not the stages' logic).
export default suiteConfig({
  include: ["tests/**/*.test.ts"],
  exclude: ["tests/hardening/**", "tests/provider-chaos.integration.test.ts", "tests/crash.integration.test.ts", "tests/host-down.integration.test.ts", "tests/seed.integration.test.ts"],
  maxWorkers: 2,
  testTimeout: 30_000,
});
