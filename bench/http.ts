import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { db } from "../lib/db";
import { startFakeProvider } from "../scripts/dev/fake-provider";
import { startInstance, type AppInstance } from "../tests/support/app-instances";
import {
  benchDatabase,
  benchPort,
  clusterPids,
  cpuMs,
  fail,
  machine,
  rounds,
  SMOKE,
  tenantPolicy,
  treeOf,
  writeSection,
} from "./common";
import { createMix, mixCall } from "./mix";
import { profileIn, profileShares } from "./profile";

// HTTP throughput and latency of `next start` under a mixed agent workload: 70% get_order, 20% rejected
// proposals (schema failures), 10% refunds within policy, spread over many conversations; at 16 and 64
// connections, with the framework's own floor (a 401 with no SQL) in the same run. Then the same mix at 64
// connections with the decision-log sealer on and off, alternated on fresh instances. Peak resident memory of the
// app process is sampled from /proc during the load. The benchmark makes its own tenant (bench/mix.ts).

if (!existsSync(".next/BUILD_ID")) fail("no production build: run `npm run build` first");
const DURATION = Number(process.env.BENCH_DURATION ?? rounds(20, 1));
const WARMUP = rounds(5, 1);
const SEALER_ROUNDS = rounds(2, 1);
const CONVERSATIONS = 256;

const database = await benchDatabase().catch((error: Error) => fail(error.message));
const provider = await startFakeProvider();
const mix = await createMix(CONVERSATIONS, 80_000_000);
const { world } = mix;
const appEnv = {
  DATABASE_URL: database.appUrl,
  PAYMENT_PROVIDER_URL: provider.url,
  PAYMENT_PROVIDER_SECRET: provider.secret,
  DATABASE_POOL_MAX: process.env.BENCH_POOL_MAX ?? "16",
  TOOLGATE_JOBS: "off",
};
// The sealer's instance runs the decision-log sealer at its shipped interval and no other job within the run.
const HOUR = "3600000";
const sealerEnv = {
  ...appEnv,
  TOOLGATE_JOBS: "on",
  // Without a key the sealer refuses to run (and /api/ready answers 503), as in production.
  AUDIT_SEAL_KEY: randomBytes(32).toString("base64"),
  OUTBOX_INTERVAL_MS: HOUR,
  RECONCILE_INTERVAL_MS: HOUR,
  EXPIRY_INTERVAL_MS: HOUR,
  RATE_PRUNE_INTERVAL_MS: HOUR,
  WATCH_PRUNE_INTERVAL_MS: HOUR,
  EXPOSURE_PRUNE_INTERVAL_MS: HOUR,
};
let instance: AppInstance = await startInstance(await benchPort(), appEnv);

function rssOfTree(pid: number): number {
  return treeOf(pid).reduce((sum, id) => {
    try {
      const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${id}/status`, "utf8"))?.[1];
      return sum + Number(kb ?? 0) * 1024;
    } catch {
      return sum;
    }
  }, 0);
}

function cpuSnapshot() {
  return {
    app: cpuMs(treeOf(instance.pid)),
    postgres: cpuMs(clusterPids(database.url)),
    generator: cpuMs([process.pid]),
  };
}

const auth = { authorization: `Bearer ${world.keys.agent}`, "content-type": "application/json" };
let sequence = 0;
function nextRequest(request: Record<string, unknown>) {
  const call = mixCall(mix, sequence++, "bench");
  const headers = call.callKey ? { ...auth, "idempotency-key": call.callKey } : auth;
  return {
    ...request,
    method: "POST",
    path: `/api/v1/conversations/${call.conversationId}/tool-calls`,
    headers,
    body: call.body,
  };
}

async function load(connections: number, seconds: number) {
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOfTree(instance.pid))), 250);
  const before = cpuSnapshot();
  const result = await autocannon({
    url: instance.url,
    connections,
    duration: seconds,
    requests: [{ setupRequest: nextRequest as never }],
  });
  const after = cpuSnapshot();
  clearInterval(sampler);
  const calls = Math.max(1, result.requests.total);
  const perCall = (key: keyof typeof before) => ((after[key] - before[key]) / calls).toFixed(2);
  return { result, peak, cpu: `${perCall("app")} / ${perCall("postgres")} / ${perCall("generator")}` };
}

await load(16, WARMUP);
const rows: string[] = [];
for (const connections of [16, 64]) {
  const { result, peak, cpu } = await load(connections, DURATION);
  const row = `| ${connections} | ${result.requests.average.toFixed(0)} | ${result.latency.p50} ms | ${result.latency.p99} ms | ${result.non2xx} | ${result.errors + result.timeouts} | ${(peak / 2 ** 20).toFixed(0)} MiB | ${cpu} |`;
  rows.push(row);
  console.log(row);
}
// The framework's own floor on this machine: an unauthenticated request answered 401 before any query.
const floor: string[] = [];
for (const connections of [16, 64]) {
  const before = cpuSnapshot();
  const result = await autocannon({
    url: `${instance.url}/api/v1/tool-calls/none`,
    connections,
    duration: Math.min(DURATION, 10),
  });
  const appMs = (cpuSnapshot().app - before.app) / result.requests.total;
  floor.push(
    `| ${connections} | ${result.requests.average.toFixed(0)} | ${result.latency.p50} ms | ${result.latency.p99} ms | ${appMs.toFixed(2)} |`,
  );
}
await instance.stop();

// The decision-log sealer on and off: fresh instances in turn, each warmed up, 64 connections; the seals and the
// rows they covered are counted per run (the sealer also seals what earlier runs appended, at most 5,000 rows a run).
async function sealedSoFar(): Promise<number> {
  const [row] = await db.$queryRaw<{ rows: number }[]>`
    SELECT COALESCE(SUM(cardinality("rowIds")), 0)::int AS "rows" FROM "DecisionSeal" WHERE "tenantId" = ${world.tenantId}`;
  return row.rows;
}
const sealer = { off: [] as string[], on: [] as string[] };
for (let round = 0; round < SEALER_ROUNDS; round++) {
  // A smoke run needs only the sealer's instance: the other is the one measured above.
  for (const phase of SMOKE ? (["on"] as const) : (["off", "on"] as const)) {
    instance = await startInstance(await benchPort(2), phase === "on" ? sealerEnv : appEnv);
    await load(16, WARMUP);
    const sealedBefore = await sealedSoFar();
    const { result, cpu } = await load(64, DURATION);
    const sealed = (await sealedSoFar()) - sealedBefore;
    await instance.stop();
    if (phase === "on" && sealed === 0 && !SMOKE) fail("the sealer's run sealed no row: it did not run");
    const row = `| sealer ${phase}, run ${round + 1} | ${result.requests.average.toFixed(0)} | ${result.latency.p50} ms | ${result.latency.p99} ms | ${result.non2xx} | ${cpu} | ${sealed} |`;
    sealer[phase].push(row);
    console.log(row);
  }
}

// What limits it: a CPU profile of a fresh instance under the same mix at 64 connections (start-up included).
const profileDir = mkdtempSync(path.join(tmpdir(), "toolgate-profile-"));
const profiled = await startInstance(await benchPort(1), appEnv, ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]);
await autocannon({
  url: profiled.url,
  connections: 64,
  duration: Math.min(DURATION, 10),
  requests: [{ setupRequest: nextRequest as never }],
});
// The load generator hangs up on calls still running; stopping the app before they finish would leave their
// refunds reserved and unknown, as a crash does.
for (
  const deadline = Date.now() + rounds(10_000, 2000);
  Date.now() < deadline && (await db.refund.count({ where: { status: "reserved" } })) > 0;
) {
  await new Promise((resolve) => setTimeout(resolve, 100));
}
await profiled.stop();
const shares = profileShares(profileIn(profileDir)).map(
  ({ label, share }) => `| ${label} | ${(share * 100).toFixed(1)}% |`,
);
rmSync(profileDir, { recursive: true, force: true });

const codes = await db.toolCall.groupBy({ by: ["code"], where: { tenantId: world.tenantId }, _count: true });
const report = `
### HTTP throughput and latency (\`npm run bench:http\`)

${await machine(database.url)}; \`next start\` (one process, pool of ${process.env.BENCH_POOL_MAX ?? "16"} connections${database.appUrl === database.url ? "" : " over the cluster's Unix-domain socket"}), autocannon in the same machine,
${DURATION} s per run after a 5 s warm-up; workload: 70% get_order, 20% rejected proposals (schema failure), 10% refunds within
policy (each through the fake payment provider over HTTP), over ${CONVERSATIONS} conversations; the instance's background jobs off.
${await tenantPolicy(world.tenantId, "limits, ceilings and rates the load never reaches")}

| connections | requests/s | p50 | p99 | non-2xx | errors + timeouts | peak RSS of the app | CPU ms per call: app / PostgreSQL / load generator and provider |
|---|---|---|---|---|---|---|---|
${rows.join("\n")}

Outcomes recorded during the runs: ${codes.map((row) => `${row.code} ${row._count}`).join(", ")}.

For scale, the same \`next start\` answering a request with no credentials (401, no SQL at all), same machine and load generator:

| connections | requests/s | p50 | p99 | app CPU ms per request |
|---|---|---|---|---|
${floor.join("\n")}

The decision-log sealer on and off, the same mix at 64 connections, ${DURATION} s per run on a fresh instance each (warmed up
${WARMUP} s), alternated: "on" runs the sealer at its shipped interval (\`SEAL_INTERVAL_MS\`, 10 s) and holds every other
job back for the run; "off" runs no job. Rows sealed counts the decision-log rows the run's seals covered.

| run | requests/s | p50 | p99 | non-2xx | CPU ms per call: app / PostgreSQL / load generator and provider | rows sealed |
|---|---|---|---|---|---|---|
${sealer.on.flatMap((row, index) => [sealer.off[index], row]).join("\n")}

Where the app's CPU goes under the mix at 64 connections (\`node --cpu-prof\` of a fresh \`next start\`, ${Math.min(DURATION, 10)} s, start-up
included; each sample counted once, for the function running; shares of busy time):

| part | share of the app's CPU |
|---|---|
${shares.join("\n")}
`;
await writeSection("http", report);
console.log(report);
await provider.close();
await database.stop();
process.exit(0);
