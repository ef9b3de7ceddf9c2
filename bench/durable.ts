import pg from "pg";
import { authenticateForConversation } from "../lib/conversations";
import { db } from "../lib/db";
import { startFakeProvider } from "../scripts/dev/fake-provider";
import { proposeCall } from "../lib/agent-api/propose";
import { watchConversation, type Watch } from "../lib/live";
import { benchDatabase, fail, machine, ms, summarize, writeSection } from "./common";
import { createMix, mixCall } from "./mix";

// The gateway on PostgreSQL that writes to disk as a deployment's does (fsync and synchronous commit on). First
// the ceiling NOTIFY puts on commits (PostgreSQL serializes notifying commits, each with its flush): one-row
// inserts from many connections, with and without pg_notify. Then the HTTP benchmark's mix through the
// functions the route calls, from many concurrent callers, as shipped and as it was before decisions 004 and 005:
// every conversation watched by a live view (each call's record NOTIFYs) and rate buckets written to the WAL
// (each call waits for a second flush); and get_order from one caller, where each flush waited for shows whole.

const DURATION_MS = Number(process.env.BENCH_DURATION ?? 8) * 1000;
const CALLERS = 32;
const CONVERSATIONS = 64;
process.env.DATABASE_POOL_MAX ??= "16";

const database = await benchDatabase({ durable: true }).catch((error: Error) => fail(error.message));
const provider = await startFakeProvider();
Object.assign(process.env, { PAYMENT_PROVIDER_URL: provider.url, PAYMENT_PROVIDER_SECRET: provider.secret });
const mix = await createMix(CONVERSATIONS, 70_000_000);
const { world, conversations } = mix;

/** Runs `step` from `callers` concurrent callers until `durationMs` has passed; returns each step's latency. */
async function concurrently(durationMs: number, step: () => Promise<unknown>, callers = CALLERS): Promise<number[]> {
  const latencies: number[] = [];
  const end = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        await step();
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
  const commits = (await concurrently(3000, () => pool.query(text, ["x"]))).length;
  await pool.end();
  return commits / 3;
}
await db.$executeRawUnsafe("CREATE TABLE bench_commits (id bigserial PRIMARY KEY, note text NOT NULL)");
const ceiling = { plain: 0, notify: 0 };
for (let round = 0; round < 2; round++) {
  ceiling.plain += (await commitsPerSecond(false)) / 2;
  ceiling.notify += (await commitsPerSecond(true)) / 2;
}
await db.$executeRawUnsafe("DROP TABLE bench_commits");
console.log(
  `commits/s from ${CALLERS} connections: plain ${ceiling.plain.toFixed(0)}, with pg_notify ${ceiling.notify.toFixed(0)}`,
);

const encoder = new TextEncoder();
let sequence = 0;
/** The `i`th call of the mix, as the route runs it: the key and conversation lookup, then the gateway. */
async function call(i = sequence++): Promise<void> {
  const next = mixCall(mix, i, "durable");
  const authenticated = await authenticateForConversation(`Bearer ${world.keys.agent}`, next.conversationId, {
    countCall: true,
  });
  const found = authenticated?.found;
  if (!authenticated || !found) throw new Error("the benchmark's key or conversation did not authenticate");
  const raw = { bytes: encoder.encode(next.body), truncated: false };
  const result = await proposeCall({
    ...found,
    apiKeyId: authenticated.agent.apiKeyId,
    callKey: next.callKey,
    raw,
    rateCounted: authenticated.rateCounted,
  });
  if (result.outcome.code !== next.expected)
    throw new Error(`a call answered ${result.outcome.code}, expected ${next.expected}`);
}
/** Every tenth call of the mix is a get_order. */
const read = () => call(10 * sequence++);

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
].map((phase) => ({ ...phase, latencies: [] as number[] }));
for (let warm = 0; warm < 200; warm++) await call();
for (let round = 0; round < 2; round++) {
  for (const phase of phases) {
    const restore = await phase.prepare();
    phase.latencies.push(...(await concurrently(DURATION_MS, phase.step, phase.callers)));
    await restore();
  }
}

const rows = phases.map((phase) => {
  const { median, p99, n } = summarize(phase.latencies);
  return `| ${phase.name} | ${phase.callers} | ${(n / ((2 * DURATION_MS) / 1000)).toFixed(0)} | ${ms(median)} | ${ms(p99)} |`;
});
rows.forEach((row) => console.log(row));
const report = `
### Durable commits (\`npm run bench:durable\`)

${await machine(database.url)}; a PostgreSQL cluster with its default durability (\`fsync\`, \`synchronous_commit\`, \`full_page_writes\` on).

One-row commits from ${CALLERS} connections (two alternating 3 s runs each):

| commit | commits/s |
|---|---|
| plain | ${ceiling.plain.toFixed(0)} |
| with \`pg_notify\` (serialized with every other notifying commit, flush included) | ${ceiling.notify.toFixed(0)} |

The gateway: concurrent callers in one process through the functions the route calls (key and conversation lookup, then the
gateway), pool of ${process.env.DATABASE_POOL_MAX} connections, the HTTP benchmark's mix (or its get_order calls alone) over ${CONVERSATIONS} conversations;
two alternating ${DURATION_MS / 1000} s runs of each phase, the shipped schema put back after each.

| phase | callers | calls/s | median | p99 |
|---|---|---|---|---|
${rows.join("\n")}
`;
await writeSection("durable", report);
console.log(report);
await provider.close();
await database.stop();
process.exit(0);
