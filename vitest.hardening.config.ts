import { suiteConfig } from "./vitest.shared";

// Tests that drive the production build (`next build` first): run by the test command after the build step.
export default suiteConfig({ include: ["tests/hardening/**/*.test.ts"], maxWorkers: 1, testTimeout: 120_000 });
