import { POST as proposeRoute } from "../app/api/v1/conversations/[id]/tool-calls/route";
import { withAgent } from "../lib/agent-api/http";
import { authenticateApiKey } from "../lib/auth/keys/api-keys";
import { findAgentConversation } from "../lib/conversations/lookup";
import { db, transaction } from "../lib/db";
import { reserveExposure } from "../lib/gateway/decide/sql";
import { startFakeProvider } from "../scripts/dev/fake-provider";
import { proposeCall } from "../lib/agent-api/propose";
import { newId } from "../lib/ids";
import { paymentProvider } from "../lib/payments/provider/provider";
import { anaConversation, createWorld, moreOrders, NO_CEILINGS, NO_DUPLICATE_GUARD } from "../tests/support/world";
import { refundAsRoute } from "./in-process";
import { benchDatabase, fail, machine, ms, rounds, summarize, tenantPolicy, writeSection } from "./common";

// Overhead of the gateway against the effect alone: the same executed refund (a) through the full gateway
// function and (b) as one hand-written Prisma transaction doing only the order update and the refund row,
// alternated in one run against one PostgreSQL. Because SPEC section 4 (stage 12) sends a refund to the payment
// provider only after its local record commits, the refund is also compared with that minimum done by hand:
// the direct transaction, the provider call and a settle update. Also a rejected call, and a read through the
// real route against a trivial authenticated route called the same way, and against the same two statements
// with no route around them. Counts the SQL statements of each call type. The benchmark makes its own tenant whose
// limits and daily ceilings no round reaches, so every refund executes (the ceilings' statements still run), and
// times those statements on their own.

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? rounds(400, 5));
const WARMUP = rounds(40, 2);

const database = await benchDatabase().catch((error: Error) => fail(error.message));
const provider = await startFakeProvider();
Object.assign(process.env, { PAYMENT_PROVIDER_URL: provider.url, PAYMENT_PROVIDER_SECRET: provider.secret });
const world = await createWorld({
  autoLimitCents: 100_000,
  sessionCapCents: 2_000_000_000,
  maxAutoWrites: 1_000_000,
  rateConversationPerMin: 1_000_000,
  rateKeyPerMin: 1_000_000,
  ...NO_CEILINGS,
  // The duplicate-intent guard still runs its statement, looking back zero hours: every round refunds an order again.
  ...NO_DUPLICATE_GUARD,
});
const [gatewayOrder, directOrder, unknownOrder] = await moreOrders(world, 3, 2_000_000_000);
// The refunds of a full run (two pairs, warm-up and rounds, 1.00 USD each, one conversation) must all execute:
// checked in a smoke run too, so a policy change that would hold them for a supervisor fails the test command.
const fullRunRefunds = 2 * (Number(process.env.BENCH_ROUNDS ?? 400) + 40) + 10;
const limits = await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } });
if (
  fullRunRefunds * 100 >
    Math.min(limits.agentDailyCeilingCents, limits.tenantDailyCeilingCents, limits.sessionCapCents) ||
  fullRunRefunds > limits.maxAutoWrites
)
  fail(`the benchmark's tenant would hold some of a full run's ${fullRunRefunds} refunds for a supervisor`);
const agent = (await authenticateApiKey(`Bearer ${world.keys.agent}`))!;
const conversationId = await anaConversation(world, ["get_order", "issue_refund"], ["orders:read", "refunds:write"]);
const found = (await findAgentConversation(agent, conversationId))!;
const encoder = new TextEncoder();
let counter = 0;

/** The refund as the route runs it: the key and conversation lookup, then the gateway function. */
const gatewayRefund = () => refundAsRoute(world.keys.agent, conversationId, gatewayOrder, `k${counter++}`, "other");

async function directWrite(
  orderId: string,
  status: "issued" | "reserved",
): Promise<{ id: string; providerKey: string }> {
  const refund = { id: newId("re"), providerKey: `direct-${counter++}` };
  await db.$transaction(async (tx) => {
    await tx.order.update({
      where: { id: orderId },
      data: { refundedCents: { increment: 100 }, version: { increment: 1 } },
      select: { id: true },
    });
    await tx.refund.create({
      data: {
        ...refund,
        tenantId: world.tenantId,
        orderId,
        toolCallId: seedCall,
        amountCents: 100,
        currency: "USD",
        reason: "other",
        status,
      },
      select: { id: true },
    });
  });
  return refund;
}

async function directRefund() {
  await directWrite(directOrder, "issued");
}

const payments = paymentProvider();
/** The least any refund must do under SPEC 12: commit the write, then ask the provider, then record its answer. */
async function directRefundWithProvider() {
  const refund = await directWrite(unknownOrder, "reserved");
  const answer = await payments.refund(refund.providerKey, {
    order_id: unknownOrder,
    amount_cents: 100,
    currency: "USD",
    reason: "other",
  });
  if (answer.kind !== "succeeded") throw new Error(`provider answered ${answer.kind}`);
  await db.refund.update({
    where: { id: refund.id },
    data: { status: "issued", providerRefundId: answer.refundId, settledAt: new Date() },
    select: { id: true },
  });
}

async function gatewayRejected() {
  const raw = {
    bytes: encoder.encode(
      JSON.stringify({
        name: "issue_refund",
        arguments: { order_id: gatewayOrder, amount_cents: "100", currency: "USD", reason: "other" },
      }),
    ),
    truncated: false,
  };
  const call = await proposeCall({ ...found, apiKeyId: agent.apiKeyId, callKey: `k${counter++}`, raw });
  const code = call === "revoked" ? call : call.outcome.code;
  if (code !== "schema.invalid") throw new Error(`rejected call answered ${code}`);
}

async function routeRead() {
  const request = new Request(`http://bench/api/v1/conversations/${conversationId}/tool-calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${world.keys.agent}` },
    body: JSON.stringify({ name: "get_order", arguments: { order_id: world.orders.o1001 } }),
  });
  const response = await proposeRoute(request, { params: Promise.resolve({ id: conversationId }) });
  if (response.status !== 200) throw new Error(`read answered ${response.status}`);
  await response.text();
}

/**
 * A trivial authenticated route, called as the gateway's route is (a `Request` in, a `Response` out, through
 * the same key-checking wrapper): check the key, load the order with one Prisma select, answer JSON.
 */
async function trivialRoute(request: Request): Promise<Response> {
  return withAgent(request, async (agent) =>
    Response.json(await loadOrder(agent.tenantId), { headers: { "Cache-Control": "no-store" } }),
  );
}

/** The one select of both read baselines. */
function loadOrder(tenantId: string) {
  return db.order.findFirst({
    where: { id: world.orders.o1001, tenantId },
    select: { id: true, status: true, totalCents: true, refundedCents: true, currency: true },
  });
}

async function trivialRead() {
  const response = await trivialRoute(
    new Request(`http://bench/api/v1/orders/${world.orders.o1001}`, {
      headers: { authorization: `Bearer ${world.keys.agent}` },
    }),
  );
  if (response.status !== 200) throw new Error(`trivial read answered ${response.status}`);
  await response.text();
}

/** The same two statements with no request around them: the floor of any authenticated read. */
async function bareRead() {
  const who = await authenticateApiKey(`Bearer ${world.keys.agent}`);
  await Response.json(await loadOrder(who!.tenantId)).text();
}

// The direct transaction's refund rows need a call to point at.
const seedCall = newId("call");
await db.toolCall.create({
  data: {
    id: seedCall,
    tenantId: world.tenantId,
    conversationId,
    toolName: "issue_refund",
    kind: "executed",
    stage: "execute",
    code: "refund.issued",
    outcome: {},
  },
});

async function time(fn: () => Promise<void>) {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const pairs = [
  {
    name: "executed refund",
    gateway: gatewayRefund,
    baseline: directRefund,
    baselineName: "direct Prisma transaction (order update + refund row)",
  },
  {
    name: "executed refund, against the effect with its provider call",
    gateway: gatewayRefund,
    baseline: directRefundWithProvider,
    baselineName: "the same direct transaction, then the provider call, then a settle update",
  },
  {
    name: "rejected call (schema failure)",
    gateway: gatewayRejected,
    baseline: directRefund,
    baselineName: "the same direct write",
  },
  {
    name: "read (get_order through the route)",
    gateway: routeRead,
    baseline: trivialRead,
    baselineName: "trivial authenticated route (key check + one select, request in, JSON out)",
  },
  {
    name: "read, against its statements alone",
    gateway: routeRead,
    baseline: bareRead,
    baselineName: "key check + one select, no request or route around them",
  },
];

const rows: string[] = [];
const counts: string[] = [];
for (const pair of pairs) {
  for (let i = 0; i < WARMUP; i++) {
    await pair.gateway();
    await pair.baseline();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    a.push(await time(pair.gateway));
    b.push(await time(pair.baseline));
  }
  const ga = summarize(a);
  const gb = summarize(b);
  rows.push(
    `| ${pair.name} | ${ms(ga.median)} | ${ms(ga.p99)} | ${pair.baselineName} | ${ms(gb.median)} | ${ms(gb.p99)} | ${(ga.median / gb.median).toFixed(2)}x | ${(ga.p99 / gb.p99).toFixed(2)}x |`,
  );
  counts.push(
    `| ${pair.name} | ${await database.statementsOf(pair.gateway)} | ${await database.statementsOf(pair.baseline)} |`,
  );
  console.log(rows.at(-1));
}

// What the exposure ceilings add to every automatic refund: the reservation against the running totals (one
// statement inside the refund's transaction, docs/decisions/021), against the same transaction without it; in a tenant
// of its own whose window holds 1,000 automatic refunds, then 100,000.
const busy = await createWorld(NO_CEILINGS);
const reservation = { tenantId: busy.tenantId, agentId: busy.users.agent, cents: 100 };
async function ceilingStatements() {
  await transaction(async (tx) => {
    if (!(await reserveExposure(tx, reservation))?.agentRunningCents) throw new Error("the reservation was refused");
  });
}
async function emptyTransaction() {
  await transaction(async () => undefined);
}
/** `count` automatic refunds of 1.00 USD spread over the last 23 hours, with their running totals. */
async function fillWindow(count: number) {
  await db.$executeRaw`DELETE FROM "AutoExposure" WHERE "tenantId" = ${busy.tenantId}`;
  await db.$executeRaw`DELETE FROM "ExposureTotal" WHERE "tenantId" = ${busy.tenantId}`;
  await db.$executeRaw`
    INSERT INTO "AutoExposure" ("tenantId", "agentId", "toolCallId", "amountCents", "createdAt", "tenantRunningCents", "agentRunningCents")
    SELECT ${busy.tenantId}, ${busy.users.agent}, 'call_busy_' || g, 100,
           now() - interval '23 hours' + (g * 82800.0 / ${count}::int) * interval '1 second', g * 100, g * 100
    FROM generate_series(1, ${count}::int) AS g`;
  await db.$executeRaw`
    INSERT INTO "ExposureTotal" ("tenantId", "agentId", "runningCents", "lastAt")
    VALUES (${busy.tenantId}, '', ${count * 100}::bigint, now()), (${busy.tenantId}, ${busy.users.agent}, ${count * 100}::bigint, now())`;
  await db.$executeRawUnsafe(`ANALYZE "AutoExposure"`);
}
const ceilingRows: string[] = [];
const reservationMedians: number[] = [];
for (const count of [rounds(1_000, 10), rounds(100_000, 100)]) {
  await fillWindow(count);
  const rows = await db.autoExposure.count({ where: { tenantId: busy.tenantId } });
  for (let i = 0; i < WARMUP; i++) {
    await ceilingStatements();
    await emptyTransaction();
  }
  const reserving: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    reserving.push(await time(ceilingStatements));
    without.push(await time(emptyTransaction));
  }
  const a = summarize(reserving);
  const b = summarize(without);
  reservationMedians.push(a.median);
  ceilingRows.push(
    `| ${rows.toLocaleString("en")} | ${ms(a.median)} | ${ms(a.p99)} | ${ms(b.median)} | ${ms(b.p99)} | ${ms(a.median - b.median)} |`,
  );
  console.log(ceilingRows.at(-1));
}

const report = `
### Gateway overhead (\`npm run bench:overhead\`)

${await machine(database.url)}; ${ROUNDS} alternated rounds per pair after ${WARMUP} warm-up rounds, in one process, one PostgreSQL.
The gateway refund is measured as the route runs it (key and conversation lookup, then the gateway function) and includes the
HTTP round trip to the local fake payment provider and the settle transaction; the second row compares it with that provider
round trip done by hand around the direct write.
${await tenantPolicy(world.tenantId, "limits and ceilings no round reaches, so every refund executes")}

| call | gateway median | gateway p99 | baseline | baseline median | baseline p99 | ratio (median) | ratio (p99) |
|---|---|---|---|---|---|---|---|
${rows.join("\n")}

SQL statements per call (every statement sent to PostgreSQL, through Prisma or straight to its pool, BEGIN and COMMIT included):

| call | gateway | baseline |
|---|---|---|
${counts.join("\n")}

What the daily exposure ceilings cost an executed refund (\`lib/gateway/decide/ceilings.ts\`, \`reserveCeilings\`): one conditional
upsert of the tenant's and the agent's running totals (docs/decisions/021), timed in a transaction of its own against the
same transaction empty (${ROUNDS} alternated rounds), in a tenant whose last 24 hours hold the automatic refunds counted
in the first column. The reserved rows stay locked until the refund commits; what that costs concurrent refunds of one
tenant is in the durable-commits table.

| automatic refunds in the tenant's window | reservation, median | p99 | empty transaction, median | p99 | added per refund (medians) |
|---|---|---|---|---|---|
${ceilingRows.join("\n")}

The reservation with the larger window against the smaller, same run: ${(reservationMedians[1] / reservationMedians[0]).toFixed(2)}x at the median.
`;
await writeSection("overhead", report);
console.log(report);
await provider.close();
await database.stop();
process.exit(0);
