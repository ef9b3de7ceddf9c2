import { suiteConfig } from "./vitest.shared";

// Unit and integration tests. tests/hardening needs the production build and runs after it (vitest.hardening.config.ts).
export default suiteConfig({
  include: ["tests/**/*.test.ts"],
  exclude: ["tests/hardening/**"],
  maxWorkers: 2,
  testTimeout: 30_000,
});
