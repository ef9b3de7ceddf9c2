import type { Defect } from "./defect";

/** The seeded defects of lib/instance/. */
export const defects: Defect[] = [
  {
    name: "seal key required",
    file: "lib/instance/jobs.ts",
    find: "if (!env().AUDIT_SEAL_KEY) return",
    replace: "if (false) return",
    testFile: "tests/ops/health.integration.test.ts",
    test: "names the jobs when they should run and do not: before they start and once they are stopped",
  },
  {
    name: "readiness migrations",
    file: "lib/instance/health.ts",
    find: 'if (pending.length) checks.migrations = `${pending.length} not applied: ${pending.join(", ")}`;',
    replace: "",
    testFile: "tests/ops/health.integration.test.ts",
    test: "names the migrations when one in the build is not applied, with its name",
  },
  {
    name: "ready logs what fails",
    file: "lib/instance/health.ts",
    find: 'if (state) logInfo("ready.not-ready", { failing, checks });',
    replace: "if (state) void failing;",
    testFile: "tests/ops/health.integration.test.ts",
    test: "tells anyone without the metrics token only whether it is ready, and logs what is not once, until it changes",
  },
  {
    name: "ready logs a state once",
    file: "lib/instance/health.ts",
    find: "if (state !== loggedNotReady) {",
    replace: "if (state !== loggedNotReady || state) {",
    testFile: "tests/ops/health.integration.test.ts",
    test: "tells anyone without the metrics token only whether it is ready, and logs what is not once, until it changes",
  },
  {
    name: "ready hides driver error",
    file: "lib/instance/health.ts",
    find: 'checks.database = "database unreachable";',
    replace: "checks.database = `unreachable: ${message(error)}`;",
    testFile: "tests/ops/health.integration.test.ts",
    test: "names the database when it cannot be reached, and nothing of the driver's error",
  },
  {
    name: "queue stream session",
    file: "lib/instance/event-stream.ts",
    find: "const poll = async () => ((await options.stillLive()) ? feed.poll() : cleanup());",
    replace: "const poll = async () => feed.poll();",
    testFile: "tests/conversations/live-session.integration.test.ts",
    test: "closes the supervisors' queue stream within its poll once the person signs out",
  },
  {
    name: "conversation stream session",
    file: "lib/instance/event-stream.ts",
    find: "const poll = async () => ((await options.stillLive()) ? feed.poll() : cleanup());",
    replace: "const poll = async () => feed.poll();",
    testFile: "tests/conversations/live-session.integration.test.ts",
    test: "closes an agent's conversation stream within its poll once an admin ends the session",
  },
  {
    name: "a closed excess leaves the overpaid gauge",
    file: "lib/instance/sql.ts",
    find: 'WHERE "overpaidAt" IS NOT NULL AND "overpaidClosedAt" IS NULL) x',
    replace: 'WHERE "overpaidAt" IS NOT NULL) x',
    testFile: "tests/ops/metrics.integration.test.ts",
    test: "reads the approval queue, outbox and unknown refunds from the database at scrape time",
  },
];
