import { existsSync } from "node:fs";
import http from "node:http";
import { loadavg } from "node:os";
import { denyRequest } from "../lib/approvals/decision/deny";
import { loadConversation } from "../lib/conversations/lookup";
import { db } from "../lib/db";
import { startFakeProvider } from "../scripts/dev/fake-provider";
import { proposeCall } from "../lib/agent-api/propose";
import { startInstance } from "../tests/support/app-instances";
import { anaConversation, createWorld, moreOrders } from "../tests/support/world";
import {
  benchDatabase,
  benchPort,
  clusterPids,
  cpuMs,
  fail,
  machine,
  ms,
  rounds,
  summarize,
  tenantPolicy,
  treeOf,
  writeSection,
} from "./common";

// 1,000 agents wait on GET /api/v1/tool-calls/{id}?wait=60 for their held refunds, against `next start`. Measured:
// the CPU the open waiters cost while nothing happens, and how soon each is answered once a supervisor decides.
// The refunds are held by the benchmark's own tenant's policy: 80.00 USD each, above its 50.00 USD limit for
// refunds without approval.

if (!existsSync(".next/BUILD_ID")) fail("no production build: run `npm run build` first");
const WAITERS = Number(process.env.BENCH_WAITERS ?? rounds(1000, 10));
const IDLE_S = rounds(5, 1);
const DECIDERS = 8;
// Agents arrive over a few seconds, not in one millisecond: a burst of 1,000 opens at once queues on the pool.
const OPEN_PER_SECOND = 100;

const database = await benchDatabase().catch((error: Error) => fail(error.message));
const provider = await startFakeProvider();
const world = await createWorld({
  autoLimitCents: 5000,
  rateConversationPerMin: 1_000_000,
  rateKeyPerMin: 1_000_000,
  rateOpenPerMin: 100_000,
});
const [order] = await moreOrders(world, 1, 2_000_000_000);

console.log(`holding ${WAITERS} refunds for approval`);
const held: { callId: string; approvalId: string }[] = [];
for (let i = 0; i < WAITERS; i++) {
  const id = await anaConversation(world, ["issue_refund"], ["refunds:write"]);
  const found = (await loadConversation(db, id))!;
  const envelope = JSON.stringify({
    name: "issue_refund",
    arguments: { order_id: order, amount_cents: 8000, currency: "USD", reason: "late" },
  });
  const call = await proposeCall({
    ...found,
    apiKeyId: null,
    callKey: null,
    raw: { bytes: new TextEncoder().encode(envelope), truncated: false },
  });
  if (call.outcome.code !== "approval.required") fail(`call ${i} was ${call.outcome.code}, not held`);
  held.push({ callId: call.id, approvalId: call.outcome.approval!.id });
}

const instance = await startInstance(await benchPort(), {
  DATABASE_URL: database.appUrl,
  PAYMENT_PROVIDER_URL: provider.url,
  PAYMENT_PROVIDER_SECRET: provider.secret,
});
const appCpu = () => cpuMs(treeOf(instance.pid));
const pgCpu = () => cpuMs(clusterPids(database.url));
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** One GET over its own connection, with no connect timeout: on a busy machine an accept can take a while. */
function getJson(url: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      url,
      { headers: { authorization: `Bearer ${world.keys.agent}` }, agent: false },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve(JSON.parse(text) as Record<string, unknown>));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
  });
}

async function idleCost(): Promise<{ app: number; postgres: number }> {
  const before = { app: appCpu(), postgres: pgCpu() };
  await sleep(IDLE_S * 1000);
  // A backend that exits during the window takes its ticks with it: never below zero.
  return {
    app: Math.max(0, appCpu() - before.app) / IDLE_S,
    postgres: Math.max(0, pgCpu() - before.postgres) / IDLE_S,
  };
}

try {
  const baseline = await idleCost();
  console.log(`opening ${WAITERS} waiters`);
  const openedAt = Date.now();
  const answeredAt = new Map<string, number>();
  const codes = new Map<string, string>();
  const waiting = held.map(({ callId }, index) =>
    sleep((index * 1000) / OPEN_PER_SECOND)
      .then(() => getJson(`${instance.url}/api/v1/tool-calls/${callId}?wait=60`))
      .then(
        (body) => codes.set(callId, String(body.code)),
        (error: Error) => codes.set(callId, `failed: ${error.message}`),
      )
      .then(() => answeredAt.set(callId, Date.now())),
  );
  while ((await db.liveWatch.count()) < WAITERS) {
    if (Date.now() - openedAt > 40_000) throw new Error("the waiters did not all open within 40 s");
    await sleep(200);
  }
  const openSeconds = (Date.now() - openedAt) / 1000;
  const open = await idleCost();
  if (answeredAt.size > 0) throw new Error(`${answeredAt.size} waiters were answered before any decision`);

  console.log(`deciding ${WAITERS} requests`);
  const decidedAt = new Map<string, number>();
  const supervisor = { userId: world.users.supervisor, tenantId: world.tenantId, role: "SUPERVISOR" };
  const decideStarted = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: DECIDERS }, async () => {
      while (next < held.length) {
        const { callId, approvalId } = held[next++];
        const result = await denyRequest(supervisor, approvalId, "benchmark");
        if (!result.ok) throw new Error(`deny failed: ${result.code}`);
        decidedAt.set(callId, Date.now());
      }
    }),
  );
  const decideSeconds = (Date.now() - decideStarted) / 1000;
  await Promise.all(waiting);
  const denied = [...codes.values()].filter((code) => code === "approval.denied").length;
  // A notice can beat the decider's own return by a few milliseconds: that counts as no delay.
  const delays = held.map(({ callId }) => Math.max(0, answeredAt.get(callId)! - decidedAt.get(callId)!));
  const delay = summarize(delays);
  const worst = Math.max(...delays);
  const within = held.filter(
    ({ callId }, index) => codes.get(callId) === "approval.denied" && delays[index] <= 1000,
  ).length;

  const resolution = 10 / IDLE_S / 10;
  const pct = (cpuMsPerSecond: number) =>
    cpuMsPerSecond === 0
      ? `under ${resolution.toFixed(1)}% of a core`
      : `${(cpuMsPerSecond / 10).toFixed(1)}% of a core`;
  const load = loadavg()[0].toFixed(1);
  await writeSection(
    "waiters",
    `### Waiting for decisions (\`npm run bench:waiters\`)

${await machine(database.url)}; one \`next start\` instance, jobs off; load average ${load} when it ended (the machine
is shared: CPU times are the app's and this cluster's own, from /proc, in 10 ms ticks).

${WAITERS} held refunds, each in its own conversation, each waited on by one \`GET /api/v1/tool-calls/{id}?wait=60\`
(one HTTP connection each), told by PostgreSQL NOTIFY through the instance's one LISTEN connection. All ${WAITERS}
waiters arrived at ${OPEN_PER_SECOND}/s; all watches were open ${openSeconds.toFixed(1)} s after the first. CPU over ${IDLE_S} s with nothing decided:

| | app (next start) | PostgreSQL |
|---|---|---|
| no waiters | ${pct(baseline.app)} | ${pct(baseline.postgres)} |
| ${WAITERS} open waiters | ${pct(open.app)} | ${pct(open.postgres)} |

Then a supervisor denied all ${WAITERS} requests (${DECIDERS} at a time, ${(WAITERS / decideSeconds).toFixed(0)} decisions/s): ${denied} of
${WAITERS} waiters were answered \`approval.denied\`, ${within} within 1 s of their decision; delay from the decision's commit
to the answer: median ${ms(delay.median)}, p99 ${ms(delay.p99)}, worst ${ms(worst)}.

${await tenantPolicy(world.tenantId, "each refund of 80.00 USD held for approval")}`,
  );
  const failures = [...codes.values()].filter((code) => code !== "approval.denied");
  if (failures.length > 0) console.log(`not denied: ${[...new Set(failures)].join("; ")}`);
  console.log(
    `denied ${denied}/${WAITERS}, within 1 s: ${within}, median ${ms(delay.median)}, p99 ${ms(delay.p99)}, worst ${ms(worst)}`,
  );
  console.log(
    `load ${load}; idle cpu: baseline app ${baseline.app.toFixed(1)} ms/s pg ${baseline.postgres.toFixed(1)} ms/s; open app ${open.app.toFixed(1)} ms/s pg ${open.postgres.toFixed(1)} ms/s`,
  );
  // A waiter never answered is a failure; one answered late is a finding for the table.
  if (denied !== WAITERS) process.exitCode = 1;
} finally {
  await instance.stop();
  await provider.close();
  await database.stop();
}
