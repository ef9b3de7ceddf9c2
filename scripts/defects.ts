import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startCluster } from "./pg-cluster";

// The seeded-defect check: a test suite that cannot fail proves nothing. Each entry below disables one check
// in a throwaway copy of the project and runs the test that guards it; this script fails unless that named
// test fails. When a guarded line is rewritten, its entry here must follow (the script says so).

interface Defect {
  name: string;
  file: string;
  find: string;
  replace: string;
  testFile: string;
  test: string;
}

const DEFECTS: Defect[] = [
  {
    name: "ownership",
    file: "lib/gateway/context.ts",
    find: 'WHERE o."id" = ${orderId} AND o."tenantId" = ${conversation.tenantId} AND o."customerId" = ${conversation.customerId}`;',
    replace: 'WHERE o."id" = ${orderId}`;',
    testFile: "tests/authorization.integration.test.ts",
    test: "non-owners of an order always get the bytes of a missing order, with no effect",
  },
  {
    name: "bound order",
    file: "lib/gateway/context.ts",
    find: "if (conversation.orderId !== null && conversation.orderId !== orderId)",
    replace: "if (false)",
    testFile: "tests/authorization.integration.test.ts",
    test: "a conversation bound to one order cannot reach the customer's other orders",
  },
  {
    name: "scope",
    file: "lib/gateway/scope.ts",
    find: 'return held.includes(tool.scope) ? pass(tool) : stop("scope.missing");',
    replace: "return pass(tool);",
    testFile: "tests/refusals.integration.test.ts",
    test: "scope.missing: an agent without the refund permission",
  },
  {
    name: "host-owned fields",
    file: "lib/gateway/schema.ts",
    find: "if (hostOwned.length > 0) {",
    replace: "if (false) {",
    testFile: "tests/refusals.integration.test.ts",
    test: "argument.host-owned: refused by name in any casing or separator",
  },
  {
    name: "session cap",
    file: "lib/gateway/policy.ts",
    find: " || conversation.irreversibleCents + impactCents > policy.sessionCapCents",
    replace: "",
    testFile: "tests/policy.integration.test.ts",
    test: "three 4000-cent refunds on ord_1004: two execute, the third crosses the session cap and waits",
  },
  {
    name: "idempotency",
    file: "lib/gateway/idempotency.ts",
    find: "if (!stored) return pass({ replay: null });",
    replace: "if (stored || !stored) return pass({ replay: null });",
    testFile: "tests/idempotency.integration.test.ts",
    test: "same key, same arguments: the stored outcome, marked replayed, and the effect once",
  },
  {
    name: "permission re-read",
    file: "lib/gateway/policy.ts",
    find: "if (!agent || !scopesFor(agent).includes(tool.scope))",
    replace: "if (!agent)",
    testFile: "tests/refusals.integration.test.ts",
    test: "agent.not-authorized: a permission revoked while the conversation is open",
  },
  {
    name: "fraud hold",
    file: "lib/gateway/policy.ts",
    find: 'if (tool.effect !== "read" && order.fraudHold) return stop("order.fraud-hold");',
    replace: "",
    testFile: "tests/refusals.integration.test.ts",
    test: "order.fraud-hold: denied, and the model is not told why",
  },
  {
    name: "order version",
    file: "lib/gateway/execute.ts",
    find: 'WHERE "id" = ${order.id} AND "version" = ${order.version}\n',
    replace: 'WHERE "id" = ${order.id}\n',
    testFile: "tests/concurrency.integration.test.ts",
    test: "a write conditional on a version the order has moved past gives order.changed and changes nothing",
  },
  {
    name: "refund reservation",
    file: "lib/tools/issue-refund.ts",
    find: "orderChanges: (args) => ({ refundedCentsIncrement: args.amount_cents, refundPending: true }),",
    replace: "orderChanges: (args) => ({ refundedCentsIncrement: args.amount_cents }),",
    testFile: "tests/provider-faults.integration.test.ts",
    test: "timeout after acting: unknown (never executed, never failed), then reconcile finds it issued, one provider refund",
  },
  {
    name: "duplicate keys",
    file: "lib/gateway/parse.ts",
    find: 'if (seen.has(key)) throw new ParseFailure("parse.duplicate-key");',
    replace: "",
    testFile: "tests/refusals.integration.test.ts",
    test: "parse.duplicate-key: at the top and inside arguments, even when escaped differently",
  },
  {
    name: "step-up",
    file: "lib/approvals/decide.ts",
    find: "if (movesMoney && impactCents > desk.stepUpAboveCents && !stepUp) {",
    replace: "if (false) {",
    testFile: "tests/approval-desk.integration.test.ts",
    test: "above the threshold an approval needs a fresh proof; the password proves it for a person without a passkey; the decision records how",
  },
  {
    name: "narrowing only",
    file: "lib/approvals/decide.ts",
    find: "after < 1 || after > before",
    replace: "after < 1",
    testFile: "tests/approval-desk.integration.test.ts",
    test: "refuses a raise, another order, another tool, another currency or reason, executing nothing and leaving the request pending",
  },
  {
    name: "two different approvers",
    file: "lib/approvals/decide.ts",
    find: "if (twoPerson && request.firstApproverId === approver.userId) {",
    replace: "if (false) {",
    testFile: "tests/approval-desk.integration.test.ts",
    test: "records the first approval as partial, refuses the same person and the requester, and executes on a second supervisor",
  },
];

const root = process.cwd();
const only = process.argv.slice(2);
const selected = only.length ? DEFECTS.filter((defect) => only.includes(defect.name)) : DEFECTS;

const cluster = process.env.TEST_DATABASE_URL ? null : await startCluster();
const databaseUrl = process.env.TEST_DATABASE_URL ?? cluster!.url;
const copy = mkdtempSync(path.join(tmpdir(), "toolgate-defects-"));
const failures: string[] = [];
try {
  cpSync(root, copy, {
    recursive: true,
    filter: (source) => !/[\\/](node_modules|\.next|\.git|\.toolgate|test-results|playwright-report)$/.test(source),
  });
  symlinkSync(path.join(root, "node_modules"), path.join(copy, "node_modules"), "dir");

  for (const defect of selected) {
    const target = path.join(copy, defect.file);
    const original = readFileSync(target, "utf8");
    const occurrences = original.split(defect.find).length - 1;
    if (occurrences !== 1) {
      failures.push(`${defect.name}: expected the guarded code once in ${defect.file}, found it ${occurrences} times; update scripts/defects.ts`);
      continue;
    }
    writeFileSync(target, original.replace(defect.find, defect.replace));
    const report = path.join(copy, `defect-report.json`);
    const run = spawnSync(
      process.execPath,
      [path.join(root, "node_modules", "vitest", "vitest.mjs"), "run", defect.testFile, "--reporter=json", `--outputFile=${report}`],
      { cwd: copy, env: { ...process.env, TEST_DATABASE_URL: databaseUrl }, encoding: "utf8" },
    );
    writeFileSync(target, original);
    const results = JSON.parse(readFileSync(report, "utf8")) as {
      testResults: { assertionResults: { title: string; status: string }[] }[];
    };
    const guard = results.testResults.flatMap((file) => file.assertionResults).find((test) => test.title === defect.test);
    if (!guard) failures.push(`${defect.name}: no test named "${defect.test}" in ${defect.testFile}`);
    else if (guard.status !== "failed") failures.push(`${defect.name}: "${defect.test}" still ${guard.status} with the check disabled`);
    else console.log(`caught  ${defect.name.padEnd(20)} by "${defect.test}"`);
    if (run.status === null) failures.push(`${defect.name}: vitest did not finish`);
  }
} finally {
  rmSync(copy, { recursive: true, force: true });
  cluster?.stop();
}

if (failures.length > 0) {
  console.error(`\nseeded-defect check failed:\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
console.log(`\nseeded-defect check: all ${selected.length} disabled checks were caught`);
