import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { migrate } from "../lib/db/migrate";
import { freePort, freshDatabase, startCluster, type Cluster } from "../scripts/pg-cluster";
import { countStatements } from "../tests/support/statements";

// Shared set-up for the benchmarks: a private PostgreSQL, the app's own Prisma client (instrumented to count
// SQL statements), and a description of the machine for the report.

/**
 * `BENCH_SMOKE=1` (the test command's smoke run): every benchmark runs its whole path for a handful of rounds,
 * asserts no timing and writes no table, so a change that breaks a benchmark fails the tests.
 */
export const SMOKE = process.env.BENCH_SMOKE === "1";

/** `full` when measuring, `smoke` in the test command's smoke run. */
export const rounds = (full: number, smoke: number) => (SMOKE ? smoke : full);

/** A port for an app instance: `BENCH_PORT` (plus `offset`) when set, else one the kernel has free. */
export async function benchPort(offset = 0): Promise<number> {
  return process.env.BENCH_PORT ? Number(process.env.BENCH_PORT) + offset : freePort();
}

export interface BenchDatabase {
  url: string;
  /** For the app under load: the Unix-domain socket of the benchmark's own cluster, else `url`. */
  appUrl: string;
  statements(): number;
  statementsOf(work: () => Promise<unknown>): Promise<number>;
  stop(): Promise<void>;
}

/** `durable`: the benchmark's own cluster writes to disk as a deployment's does (a given server is as it is). */
export async function benchDatabase({ durable = false } = {}): Promise<BenchDatabase> {
  let cluster: Cluster | null = null;
  // A given server gets a fresh database beside its own, so that runs never see each other's rows.
  const given = process.env.BENCH_DATABASE_URL;
  const url = given ? await freshDatabase(given, "toolgate_bench") : (cluster = await startCluster({ durable })).url;
  const appUrl = cluster ? cluster.socketUrl : url;
  // A benchmark that fails or throws still stops its cluster (stop is synchronous and runs once).
  process.once("exit", () => cluster?.stop());
  await migrate(url);
  process.env.DATABASE_URL = url;
  const counter = countStatements(url);
  return {
    url,
    appUrl,
    statements: counter.statements,
    statementsOf: counter.statementsOf,
    async stop() {
      await counter.stop();
      cluster?.stop();
    },
  };
}

export async function machine(url: string): Promise<string> {
  const pg = await import("pg");
  const connection = new pg.default.Client({ connectionString: url });
  await connection.connect();
  const { rows } = await connection.query<{ server_version: string }>("SHOW server_version");
  await connection.end();
  let kernel = "";
  try {
    kernel = execFileSync("uname", ["-sr"], { encoding: "utf8" }).trim();
  } catch {
    kernel = process.platform;
  }
  return [
    `date ${new Date().toISOString()}`,
    `${cpus().length} cores (${cpus()[0]?.model ?? "unknown CPU"}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
    `Node ${process.version}, PostgreSQL ${rows[0].server_version}, ${kernel}`,
  ].join("; ");
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function summarize(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: percentile(sorted, 50), p99: percentile(sorted, 99), n: sorted.length };
}

export const ms = (value: number) => `${value.toFixed(2)} ms`;

/** Replaces the block between `<!-- bench:NAME -->` markers in docs/BENCHMARKS.md (not in a smoke run). */
export async function writeSection(name: string, markdown: string): Promise<void> {
  if (SMOKE) return;
  const { readFile, writeFile } = await import("node:fs/promises");
  const file = "docs/BENCHMARKS.md";
  const text = await readFile(file, "utf8").catch(() => "# Benchmarks\n");
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const pattern = new RegExp(`${start}[\\s\\S]*?${end}`);
  await writeFile(file, pattern.test(text) ? text.replace(pattern, block) : `${text.trimEnd()}\n\n${block}\n`);
}

export function fail(message: string): never {
  console.error(`benchmark could not run: ${message}`);
  process.exit(1);
}

/** A process and all its descendants. */
export function treeOf(pid: number): number[] {
  try {
    const children = execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
    return [pid, ...children.flatMap(treeOf)];
  } catch {
    return [pid];
  }
}

// CPU time (user + system) of a set of processes, from /proc, in milliseconds.
const TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
export function cpuMs(pids: number[]): number {
  return pids.reduce((sum, id) => {
    try {
      const fields = readFileSync(`/proc/${id}/stat`, "utf8").split(") ")[1].split(" ");
      return sum + (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    } catch {
      return sum;
    }
  }, 0);
}
const postgresPids = () =>
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((id) => {
      try {
        return readFileSync(`/proc/${id}/comm`, "utf8").trim() === "postgres";
      } catch {
        return false;
      }
    });

/** The processes of the cluster serving `url`: its postmaster (found by port) and every backend under it. */
export function clusterPids(url: string): number[] {
  const port = new URL(url).port;
  const postmaster = postgresPids().find((id) => {
    try {
      return readFileSync(`/proc/${id}/cmdline`, "utf8").split("\0").join(" ").includes(` -p ${port} `);
    } catch {
      return false;
    }
  });
  return postmaster === undefined ? [] : treeOf(postmaster);
}

/**
 * The header line that says whose numbers a benchmark ran under: its own tenant, made by the benchmark, with the
 * policy numbers read back from the database (never the demo seed's).
 */
export async function tenantPolicy(tenantId: string, why: string): Promise<string> {
  const { db } = await import("../lib/db");
  const t = await db.tenant.findUniqueOrThrow({ where: { id: tenantId } });
  const usd = (cents: number) => `${(cents / 100).toLocaleString("en", { minimumFractionDigits: 2 })} USD`;
  return (
    `Tenant: its own, made by the benchmark (${why}): refunds without approval up to ${usd(t.autoLimitCents)}, ` +
    `${usd(t.sessionCapCents)} and ${t.maxAutoWrites.toLocaleString("en")} writes per conversation, ` +
    `daily ceilings ${usd(t.agentDailyCeilingCents)} per agent and ${usd(t.tenantDailyCeilingCents)} per tenant, ` +
    `${t.rateConversationPerMin.toLocaleString("en")} calls a minute per conversation and ` +
    `${t.rateKeyPerMin.toLocaleString("en")} per key; duplicate-refund window ${t.duplicateWindowHours} hours.`
  );
}
