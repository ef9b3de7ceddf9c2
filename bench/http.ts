import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { db } from "../lib/db";
import { startFakeProvider } from "../scripts/dev/fake-provider";
import { startInstance } from "../tests/support/app-instances";
import { benchDatabase, cpuMs, fail, machine, postgresPids, treeOf, writeSection } from "./common";
import { createMix, mixCall } from "./mix";
import { profileIn, profileShares } from "./profile";

// HTTP throughput and latency of `next start` under a mixed agent workload: 70% get_order, 20% rejected
// proposals (schema failures), 10% refunds within policy, spread over many conversations; at 16 and 64
// connections. Peak resident memory of the app process is sampled from /proc during the load.

if (!existsSync(".next/BUILD_ID")) fail("no production build: run `npm run build` first");
const DURATION = Number(process.env.BENCH_DURATION ?? 20);
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
  // BENCH_JOBS=on runs the instance's background jobs (the decision-log sealer among them) during the load.
  TOOLGATE_JOBS: process.env.BENCH_JOBS ?? "off",
};
// BENCH_PORT moves the two instances (PORT and PORT - 1) off the defaults when others share the machine.
const PORT = Number(process.env.BENCH_PORT ?? 3399);
const instance = await startInstance(PORT, appEnv);

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
  return { app: cpuMs(treeOf(instance.pid)), postgres: cpuMs(postgresPids()), generator: cpuMs([process.pid]) };
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
  const calls = result.requests.total;
  const perCall = (key: keyof typeof before) => ((after[key] - before[key]) / calls).toFixed(2);
  return { result, peak, cpu: `${perCall("app")} / ${perCall("postgres")} / ${perCall("generator")}` };
}

await load(16, 5);
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

// What limits it: a CPU profile of a fresh instance under the same mix at 64 connections (start-up included).
const profileDir = mkdtempSync(path.join(tmpdir(), "toolgate-profile-"));
const profiled = await startInstance(PORT - 1, appEnv, ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]);
await autocannon({
  url: profiled.url,
  connections: 64,
  duration: Math.min(DURATION, 10),
  requests: [{ setupRequest: nextRequest as never }],
});
// The load generator hangs up on calls still running; stopping the app before they finish would leave their
// refunds reserved and unknown, as a crash does.
for (
  const deadline = Date.now() + 10_000;
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
const seals = await db.decisionSeal.aggregate({ where: { tenantId: world.tenantId }, _count: true });
const sealedRows = (
  await db.decisionSeal.findMany({ where: { tenantId: world.tenantId }, select: { rowIds: true } })
).reduce((sum, seal) => sum + seal.rowIds.length, 0);
const loggedRows = await db.decisionLog.count({ where: { tenantId: world.tenantId } });
const report = `
### HTTP throughput and latency (\`npm run bench:http\`)

${await machine(database.url)}; \`next start\` (one process, pool of ${process.env.BENCH_POOL_MAX ?? "16"} connections${database.appUrl === database.url ? "" : " over the cluster's Unix-domain socket"}), autocannon in the same machine,
${DURATION} s per run after a 5 s warm-up; workload: 70% get_order, 20% rejected proposals (schema failure), 10% refunds within
policy (each through the fake payment provider over HTTP), over ${CONVERSATIONS} conversations.

| connections | requests/s | p50 | p99 | non-2xx | errors + timeouts | peak RSS of the app | CPU ms per call: app / PostgreSQL / load generator and provider |
|---|---|---|---|---|---|---|---|
${rows.join("\n")}

Outcomes recorded during the runs: ${codes.map((row) => `${row.code} ${row._count}`).join(", ")}.
Decision-log seals written meanwhile (only with \`BENCH_JOBS=on\`): ${seals._count}, covering ${sealedRows} of ${loggedRows} rows.

For scale, the same \`next start\` answering a request with no credentials (401, no SQL at all), same machine and load generator:

| connections | requests/s | p50 | p99 | app CPU ms per request |
|---|---|---|---|---|
${floor.join("\n")}

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
