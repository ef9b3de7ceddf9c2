import pg from "pg";
import { db } from "../lib/db";
import { startFakeProvider } from "../scripts/dev/fake-provider";
import { watchConversation, type Watch } from "../lib/live";
import { benchDatabase, fail, machine, ms, rounds, SMOKE, summarize, tenantPolicy, writeSection } from "./common";
import { callAsRoute, refundAsRoute } from "./in-process";
import { createMix, mixCall, type Mix } from "./mix";

// The gateway on PostgreSQL that writes to disk as a deployment's does (fsync and synchronous commit on). First
// the ceiling NOTIFY puts on commits (PostgreSQL serializes notifying commits, each with its flush): one-row
// inserts from many connections, with and without pg_notify. Then the HTTP benchmark's mix through the
// functions the route calls, from many concurrent callers, as shipped and as it was before decisions 004 and 005:
// every conversation watched by a live view (each call's record NOTIFYs) and rate buckets written to the WAL
// (each call waits for a second flush); and get_order from one caller, where each flush waited for shows whole.
// Last, what the exposure ceilings' serialization costs concurrent refunds: refunds alone from many callers in one
// tenant (each holds the tenant's running total from its reservation until its commit is flushed, decision 021)
// against the same callers each in a tenant of its own. Every tenant is the benchmark's own (bench/mix.ts), under limits and ceilings the load never reaches.

const DURATION_MS = Number(process.env.BENCH_DURATION ?? rounds(8, 0.5)) * 1000;
const COMMITS_MS = rounds(3000, 300);
const ROUNDS = rounds(2, 1);
const CALLERS = 32;
const REFUND_CALLERS = rounds(16, 4);
const CONVERSATIONS = 64;
process.env.DATABASE_POOL_MAX ??= "16";

// A smoke run only walks the path: it spares the test command the flushes.
const database = await benchDatabase({ durable: !SMOKE }).catch((error: Error) => fail(error.message));
const provider = await startFakeProvider();
Object.assign(process.env, { PAYMENT_PROVIDER_URL: provider.url, PAYMENT_PROVIDER_SECRET: provider.secret });
const mix = await createMix(CONVERSATIONS, 70_000_000);
const { world, conversations } = mix;
/** One tenant per refund caller, each with one conversation. */
const tenants = await Promise.all(
  Array.from({ length: REFUND_CALLERS }, (_, index) => createMix(1, 71_000_000 + index)),
);

/**
 * Runs `step` from `callers` concurrent callers (each passing its own number) until `durationMs` has passed;
 * returns each step's latency.
 */
async function concurrently(
  durationMs: number,
  step: (caller: number) => Promise<unknown>,
  callers = CALLERS,
): Promise<number[]> {
  const latencies: number[] = [];
  const end = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      while (performance.now() < end) {
        const started = performance.now();
        await step(caller);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

/** Single-row commits per second from `CALLERS` connections, each statement its own transaction. */
async function commitsPerSecond(notify: boolean): Promise<number> {
  const pool = new pg.Pool({ connectionString: database.url, max: CALLERS });
  const text = `WITH row AS (INSERT INTO bench_commits (note) VALUES ($1) RETURNING id) SELECT ${notify ? "pg_notify('bench_commits', $1)" : "$1"} FROM row`;
  const commits = (await concurrently(COMMITS_MS, () => pool.query(text, ["x"]))).length;
  await pool.end();
  return commits / (COMMITS_MS / 1000);
}
await db.$executeRawUnsafe("CREATE TABLE bench_commits (id bigserial PRIMARY KEY, note text NOT NULL)");
const ceiling = { plain: 0, notify: 0 };
for (let round = 0; round < ROUNDS; round++) {
  ceiling.plain += (await commitsPerSecond(false)) / ROUNDS;
  ceiling.notify += (await commitsPerSecond(true)) / ROUNDS;
}
await db.$executeRawUnsafe("DROP TABLE bench_commits");
console.log(
  `commits/s from ${CALLERS} connections: plain ${ceiling.plain.toFixed(0)}, with pg_notify ${ceiling.notify.toFixed(0)}`,
);

let sequence = 0;
/** The `i`th call of the mix, as the route runs it: the key and conversation lookup, then the gateway. */
async function call(i = sequence++): Promise<void> {
  const next = mixCall(mix, i, "durable");
  await callAsRoute({ key: world.keys.agent, ...next });
}
/** Every tenth call of the mix is a get_order. */
const read = () => call(10 * sequence++);

/** An executed refund of 1.00 USD in the `caller`th conversation of `of`, as the route runs it. */
async function refund(of: Mix, caller: number): Promise<void> {
  const conversation = of.conversations[caller % of.conversations.length];
  await refundAsRoute(of.world.keys.agent, conversation.id, conversation.order, `refund-${sequence++}`, "late");
}

/** Sets the rate buckets' persistence for a phase; returns what puts the shipped one back. */
async function rateBuckets(persistence: "LOGGED" | "UNLOGGED"): Promise<() => Promise<void>> {
  await db.$executeRawUnsafe(`ALTER TABLE "RateBucket" SET ${persistence}`);
  return async () => void (await db.$executeRawUnsafe(`ALTER TABLE "RateBucket" SET UNLOGGED`));
}
async function everyConversationWatched(): Promise<() => Promise<void>> {
  const watches: Watch[] = await Promise.all(conversations.map((conversation) => watchConversation(conversation.id)));
  return async () => void (await Promise.all(watches.map((watch) => watch.end())));
}
const asShipped = async () => async () => undefined;

const phases = [
  {
    name: "the mix, as shipped (rate buckets unlogged, no conversation watched)",
    callers: CALLERS,
    step: () => call(),
    prepare: asShipped,
  },
  {
    name: "the mix, every conversation watched (each call NOTIFYs, as before decision 004)",
    callers: CALLERS,
    step: () => call(),
    prepare: everyConversationWatched,
  },
  {
    name: "the mix, rate buckets logged (as before decision 005)",
    callers: CALLERS,
    step: () => call(),
    prepare: () => rateBuckets("LOGGED"),
  },
  { name: "get_order alone, as shipped", callers: 1, step: read, prepare: asShipped },
  {
    name: "get_order alone, rate buckets logged (as before decision 005)",
    callers: 1,
    step: read,
    prepare: () => rateBuckets("LOGGED"),
  },
  {
    name: "refunds alone, every caller in one tenant (each reserves against the tenant's running total)",
    callers: REFUND_CALLERS,
    step: (caller: number) => refund(mix, caller),
    prepare: asShipped,
  },
  {
    name: "refunds alone, each caller in a tenant of its own (no two reserve against one total)",
    callers: REFUND_CALLERS,
    step: (caller: number) => refund(tenants[caller], 0),
    prepare: asShipped,
  },
].map((phase) => ({ ...phase, latencies: [] as number[] }));
for (let warm = 0; warm < rounds(200, 5); warm++) await call();
for (let round = 0; round < ROUNDS; round++) {
  for (const phase of phases) {
    const restore = await phase.prepare();
    phase.latencies.push(...(await concurrently(DURATION_MS, phase.step, phase.callers)));
    await restore();
  }
}

const perSecond = (phase: (typeof phases)[number]) => phase.latencies.length / ((ROUNDS * DURATION_MS) / 1000);
const rows = phases.map((phase) => {
  const { median, p99 } = summarize(phase.latencies);
  return `| ${phase.name} | ${phase.callers} | ${perSecond(phase).toFixed(0)} | ${ms(median)} | ${ms(p99)} |`;
});
const [oneTenant, ownTenants] = phases.slice(-2);
rows.forEach((row) => console.log(row));
const report = `
### Durable commits (\`npm run bench:durable\`)

${await machine(database.url)}; a PostgreSQL cluster with its default durability (\`fsync\`, \`synchronous_commit\`, \`full_page_writes\` on).

${await tenantPolicy(world.tenantId, "limits, ceilings and rates the load never reaches; the refund phases' other tenants alike")}

One-row commits from ${CALLERS} connections (${ROUNDS} alternating ${COMMITS_MS / 1000} s runs each):

| commit | commits/s |
|---|---|
| plain | ${ceiling.plain.toFixed(0)} |
| with \`pg_notify\` (serialized with every other notifying commit, flush included) | ${ceiling.notify.toFixed(0)} |

The gateway: concurrent callers in one process through the functions the route calls (key and conversation lookup, then the
gateway), pool of ${process.env.DATABASE_POOL_MAX} connections, the HTTP benchmark's mix (or its get_order calls alone) over ${CONVERSATIONS} conversations;
${ROUNDS} alternating ${DURATION_MS / 1000} s runs of each phase, the shipped schema put back after each. The refund phases
send only executed refunds of 1.00 USD (each through the fake provider), one conversation per caller.

| phase | callers | calls/s | median | p99 |
|---|---|---|---|---|
${rows.join("\n")}

Refunds of one tenant against refunds of separate tenants, same run: ${(perSecond(oneTenant) / perSecond(ownTenants)).toFixed(2)}x the calls/s.
`;
await writeSection("durable", report);
console.log(report);
await provider.close();
await database.stop();
process.exit(0);
