import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startCluster } from "./pg-cluster";
import type { Defect } from "./defects/defect";
import { defects as AgentApi } from "./defects/agent-api";
import { defects as Gateway } from "./defects/gateway";
import { defects as Upstream } from "./defects/upstream";
import { defects as Tools } from "./defects/tools";
import { defects as Payments } from "./defects/payments";
import { defects as Approvals } from "./defects/approvals";
import { defects as Conversations } from "./defects/conversations";
import { defects as Admin } from "./defects/admin";
import { defects as PolicyRules } from "./defects/policy-rules";
import { defects as Auth } from "./defects/auth";
import { defects as Oauth } from "./defects/oauth";
import { defects as Audit } from "./defects/audit";
import { defects as ChatNotices } from "./defects/chat-notices";
import { defects as Instance } from "./defects/instance";
import { defects as Security } from "./defects/security";
import { defects as Ground } from "./defects/ground";
import { defects as App } from "./defects/app";
import { defects as Eslint } from "./defects/eslint";

// The seeded-defect check: a test suite that cannot fail proves nothing. Each entry (one table per feature, in
// scripts/defects/) disables one check in a throwaway copy of the project and runs the test that guards it; this
// script fails unless that named test fails. When a guarded line is rewritten, its entry must follow (the script
// says so).
const DEFECTS: Defect[] = [
  ...AgentApi,
  ...Gateway,
  ...Upstream,
  ...Tools,
  ...Payments,
  ...Approvals,
  ...Conversations,
  ...Admin,
  ...PolicyRules,
  ...Auth,
  ...Oauth,
  ...Audit,
  ...ChatNotices,
  ...Instance,
  ...Security,
  ...Ground,
  ...App,
  ...Eslint,
];
const root = process.cwd();
// `scripts/defects.ts "scope" "bound order"` runs only the named entries; a name that is not an entry is refused.
const only = process.argv.slice(2);
const named = DEFECTS.map((defect) => defect.name);
const twice = named.filter((name, index) => named.indexOf(name) !== index);
if (twice.length > 0) {
  console.error(`seeded defects must have names of their own; used twice: ${twice.join(", ")}`);
  process.exit(1);
}
const unknown = only.filter((name) => !DEFECTS.some((defect) => defect.name === name));
if (unknown.length > 0) {
  console.error(`no seeded defect named ${unknown.map((name) => `"${name}"`).join(", ")}`);
  process.exit(1);
}
const selected = only.length ? DEFECTS.filter((defect) => only.includes(defect.name)) : DEFECTS;

/** A title pattern: the literal parts of `template` with `.+` wherever `placeholder` fills something in. */
function titlePattern(template: string, placeholder: RegExp): RegExp {
  const pattern = template
    .split(placeholder)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".+");
  return new RegExp(`^${pattern}$`);
}

/**
 * Whether a test file declares a test of this title: literally, as a template whose `${…}` parts it fills, or as
 * an `it.each(…)("…")` title whose `%s`/`%j`/`%d`/`%i` its cases fill.
 */
function declares(source: string, title: string): boolean {
  if (source.includes(title)) return true;
  const templates = [...source.matchAll(/\bit(?:\.\w+)?\(\s*`([^`]*)`/g)].map(([, template]) =>
    titlePattern(template, /\$\{[^}]*\}/),
  );
  const eachTitles = [...source.matchAll(/\)\(\s*"([^"]*%[sjdi][^"]*)"/g)].map(([, template]) =>
    titlePattern(template, /%[sjdi]/),
  );
  return [...templates, ...eachTitles].some((pattern) => pattern.test(title));
}

// Checked before anything runs: an entry whose files moved must follow them, not pass or crash later.
const stale = selected.flatMap((defect) => {
  if (!existsSync(path.join(root, defect.file))) return [`${defect.name}: ${defect.file} does not exist`];
  if (!existsSync(path.join(root, defect.testFile))) return [`${defect.name}: ${defect.testFile} does not exist`];
  if (!declares(readFileSync(path.join(root, defect.testFile), "utf8"), defect.test))
    return [`${defect.name}: ${defect.testFile} declares no test named "${defect.test}"`];
  return [];
});
if (stale.length > 0) {
  console.error(`seeded-defect check refused; update scripts/defects.ts:\n  ${stale.join("\n  ")}`);
  process.exit(1);
}
// Two copies of the project take turns through the list: most of a run is starting Vitest and waiting on PostgreSQL,
// so two at once finish in a little over half the time on the two cores CI has.
const WORKERS = Math.max(1, Number(process.env.DEFECT_WORKERS ?? 2));

const runs = new Set<ChildProcess>();

function vitest(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, "node_modules", "vitest", "vitest.mjs"), ...args], {
      cwd,
      env,
      stdio: "ignore",
    });
    runs.add(child);
    child.once("exit", (code) => {
      runs.delete(child);
      resolve(code);
    });
  });
}

/** Disables one check in `copy`, runs the test file that guards it, puts the check back; a failure's sentence or null. */
async function tryDefect(copy: string, defect: Defect, databaseUrl: string): Promise<string | null> {
  const target = path.join(copy, defect.file);
  const original = readFileSync(target, "utf8");
  const occurrences = original.split(defect.find).length - 1;
  if (occurrences !== 1)
    return `${defect.name}: expected the guarded code once in ${defect.file}, found it ${occurrences} times; update scripts/defects.ts`;
  writeFileSync(target, original.replace(defect.find, defect.replace));
  const report = path.join(copy, "defect-report.json");
  rmSync(report, { force: true });
  const status = await vitest(copy, ["run", defect.testFile, "--reporter=json", `--outputFile=${report}`], {
    ...process.env,
    TEST_DATABASE_URL: databaseUrl,
  });
  writeFileSync(target, original);
  if (status === null) return `${defect.name}: vitest did not finish`;
  if (!existsSync(report)) return `${defect.name}: vitest ran no test file for ${defect.testFile}`;
  const results = JSON.parse(readFileSync(report, "utf8")) as {
    testResults: { assertionResults: { title: string; status: string }[] }[];
  };
  const guard = results.testResults.flatMap((file) => file.assertionResults).find((test) => test.title === defect.test);
  if (!guard) return `${defect.name}: no test named "${defect.test}" in ${defect.testFile}`;
  if (guard.status !== "failed")
    return `${defect.name}: "${defect.test}" still ${guard.status} with the check disabled`;
  console.log(`caught  ${defect.name.padEnd(20)} by "${defect.test}"`);
  return null;
}

const cluster = process.env.TEST_DATABASE_URL ? null : await startCluster();
const databaseUrl = process.env.TEST_DATABASE_URL ?? cluster!.url;
const copies: string[] = [];
// Also when the run is interrupted (Ctrl-C, `timeout`; the cluster's own handler then ends the process): a Vitest
// still running would write its report into a removed copy.
const removeCopies = () => {
  runs.forEach((child) => child.kill("SIGKILL"));
  copies.splice(0).forEach((copy) => rmSync(copy, { recursive: true, force: true }));
};
process.once("exit", removeCopies);
const failures: string[] = [];
try {
  for (let worker = 0; worker < Math.min(WORKERS, selected.length); worker++) {
    const copy = mkdtempSync(path.join(tmpdir(), "toolgate-defects-"));
    copies.push(copy);
    cpSync(root, copy, {
      recursive: true,
      filter: (source) => !/[\\/](node_modules|\.next|\.git|\.toolgate|test-results|playwright-report)$/.test(source),
    });
    symlinkSync(path.join(root, "node_modules"), path.join(copy, "node_modules"), "dir");
  }
  const queue = [...selected];
  await Promise.all(
    copies.map(async (copy) => {
      for (let defect = queue.shift(); defect; defect = queue.shift()) {
        const failure = await tryDefect(copy, defect, databaseUrl);
        if (failure) failures.push(failure);
      }
    }),
  );
} finally {
  removeCopies();
  cluster?.stop();
}

if (failures.length > 0) {
  console.error(`\nseeded-defect check failed:\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
console.log(`\nseeded-defect check: all ${selected.length} disabled checks were caught`);
