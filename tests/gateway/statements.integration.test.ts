import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { db, transaction } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { conversationFor, getToolCall, newCallKey, propose, type CallBody } from "../support/api";
import { holdRefund, refund } from "../support/calls";
import { ownExternals } from "../support/externals";
import { countStatements, type StatementCounter } from "../support/statements";
import { createWorld, moreOrders, type World } from "../support/world";
import { OLD_ORDERS, SECOND_REFUND_WAITS } from "../policy-rules/examples";
import { putRules } from "../policy-rules/support";

// Every round trip to PostgreSQL is time on the call's path (docs/BENCHMARKS.md): a change that adds one to an
// executed refund or to a read fails here. Counted through the route, key lookup and settle included (BEGIN with the
// statements it carries is one, and so is the effect's statement with the COMMIT sent with it, docs/decisions/029),
// with the duplicate guard, the exposure ceilings and the rules' facts all running as a tenant's defaults have them.
const EXECUTED_REFUND = 4;
// A live rule on what other calls change (the agent's refunds today, the customer's flag) is judged again on facts
// read under the reservation's locks, so the reservation and the rules' second read are statements of their own
// (docs/decisions/023 and 028), and the effect's statement commits on its own: three more, only for such a tenant.
const EXECUTED_REFUND_MOVING_RULE = 7;
const READ = 2;
// Reading a call's outcome: the key's lookup, which counts the read against the agent's budget, then the call's row
// with its approval's joined.
const CALL_STATUS = 2;

const externals = ownExternals();
let counter: StatementCounter;
let world: World;
beforeAll(async () => {
  counter = countStatements(process.env.DATABASE_URL!);
  world = await createWorld();
});
afterAll(() => counter.stop());

/** A refund of 5.00 USD in a new tenant whose live rules are `rules`, and the statements it sent. */
async function refundUnder(rules: string) {
  const ruled = await createWorld();
  await putRules(ruled, rules);
  const [order] = await moreOrders(ruled, 1);
  const conversation = await conversationFor(ruled.keys.agent, { customer_id: ruled.customers.ana });
  // The process reads a rule set's text once: a read compiles it first.
  await propose(ruled.keys.agent, conversation, { name: "get_order", arguments: { order_id: order } });
  let code: unknown;
  const sent = await counter.statementsOf(async () => {
    code = (await propose(ruled.keys.agent, conversation, refund(order, 500), newCallKey())).json.code;
  });
  return { ruled, order, code, sent };
}

describe("statements per call", () => {
  it(`an executed refund sends at most ${EXECUTED_REFUND} statements, BEGIN, COMMIT and the settle included`, async () => {
    const [order] = await moreOrders(world, 1);
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    let code: unknown;
    const sent = await counter.statementsOf(async () => {
      code = (await propose(world.keys.agent, conversation, refund(order, 500), newCallKey())).json.code;
    });
    expect(code).toBe("refund.issued");
    expect((await externals.stats()).totalsByOrder[order]).toBe(500);
    expect(await db.refund.count({ where: { orderId: order, status: "issued" } })).toBe(1);
    expect(sent).toBeLessThanOrEqual(EXECUTED_REFUND);
  });

  it(`with a live rule on the agent's refunds today, an executed refund sends at most ${EXECUTED_REFUND_MOVING_RULE}`, async () => {
    const { ruled, order, code, sent } = await refundUnder(SECOND_REFUND_WAITS);
    expect(code).toBe("refund.issued");
    expect(await db.refund.count({ where: { orderId: order, status: "issued" } })).toBe(1);
    // Reserved before the effect, its exposure is recorded with it as on the one-statement path.
    expect(await db.autoExposure.count({ where: { tenantId: ruled.tenantId, amountCents: 500 } })).toBe(1);
    const totals = await db.exposureTotal.findMany({ where: { tenantId: ruled.tenantId } });
    expect(totals.map((total) => Number(total.runningCents))).toEqual([500, 500]);
    expect(sent).toBeLessThanOrEqual(EXECUTED_REFUND_MOVING_RULE);
  });

  it(`with live rules that read nothing another call changes, an executed refund still sends at most ${EXECUTED_REFUND}`, async () => {
    const { code, sent } = await refundUnder(OLD_ORDERS);
    expect(code).toBe("refund.issued");
    expect(sent).toBeLessThanOrEqual(EXECUTED_REFUND);
  });

  it(`a read sends at most ${READ} statements`, async () => {
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    let body: CallBody | null = null;
    const sent = await counter.statementsOf(async () => {
      body = (
        await propose(world.keys.agent, conversation, {
          name: "get_order",
          arguments: { order_id: world.orders.o1001 },
        })
      ).json;
    });
    expect(body).toMatchObject({ code: "order.read", result: { order_id: world.orders.o1001 } });
    expect(await db.toolCall.count({ where: { conversationId: conversation, code: "order.read" } })).toBe(1);
    expect(sent).toBeLessThanOrEqual(READ);
  });

  it(`reading a call's outcome sends at most ${CALL_STATUS} statements, its rate counted in the key's lookup; one past the rate sends 1`, async () => {
    const limited = await createWorld({ rateKeyPerMin: 2 });
    const { callId } = await holdRefund(limited);
    let status: unknown;
    const sent = await counter.statementsOf(async () => {
      status = (await getToolCall(limited.keys.agent, callId)).json.code;
    });
    expect(status).toBe("approval.required");
    expect(sent).toBeLessThanOrEqual(CALL_STATUS);
    const refused = await counter.statementsOf(async () => {
      status = (await getToolCall(limited.keys.agent, callId)).status;
    });
    expect(status).toBe(429);
    expect(refused).toBe(1);
  });

  it("the order a read's body names is read with the key, and only as the conversation's customer's", async () => {
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const other = await createWorld();
    // Another customer's order in this tenant, and an order of another tenant: neither is found, and both cost no more.
    for (const order_id of [world.orders.o2001, other.orders.o1001]) {
      let body: CallBody | null = null;
      const sent = await counter.statementsOf(async () => {
        body = (await propose(world.keys.agent, conversation, { name: "get_order", arguments: { order_id } })).json;
      });
      expect(body).toMatchObject({ kind: "rejected", code: "order.not-found" });
      expect(body).not.toHaveProperty("result");
      expect(sent).toBeLessThanOrEqual(READ);
    }
    // A write's body names an order too: its facts are still read under the conversation's lock, the key's read unused.
    const [order] = await moreOrders(world, 1);
    const written = await propose(world.keys.agent, conversation, refund(order, 300), newCallKey());
    expect(written.json.code).toBe("refund.issued");
    expect(await db.order.findUniqueOrThrow({ where: { id: order } })).toMatchObject({ refundedCents: 300 });
  });
});

describe("statements sent with BEGIN", () => {
  it("carry their values as literals that stay values, each its own statement, and refuse a value they cannot write safely", async () => {
    const hostile = String.raw`x'); DROP TABLE "Tenant"; -- \' \\ é`;
    const sent = await counter.statementsOf(async () => {
      const [first, second] = await transaction(async (_tx, opened) => opened, {
        opening: [
          Prisma.sql`SELECT ${hostile}::text AS "value", ${-12.5}::float8 AS "n"`,
          Prisma.sql`SELECT ${true}::boolean AS "yes", ${null}::text AS "none", ${"two"}::text AS "value"`,
        ],
      });
      expect(first).toEqual([{ value: hostile, n: -12.5 }]);
      expect(second).toEqual([{ yes: true, none: null, value: "two" }]);
    });
    // BEGIN with its statements, then COMMIT.
    expect(sent).toBe(2);
    expect(await db.tenant.count()).toBeGreaterThan(0);
    await expect(
      transaction(async () => null, { opening: [Prisma.sql`SELECT ${new Date()}::timestamptz`] }),
    ).rejects.toThrow(/strings, numbers, booleans and null only/);
  });

  it("write a value only where a parameter stands, not into a quoted string or name that reads like one", async () => {
    const [[row]] = await transaction(async (_tx, opened) => opened, {
      opening: [Prisma.sql`SELECT '$1 and ''$1''' AS "text", ${"it"}::text AS "value", 'name' AS "$1"`],
    });
    expect(row).toEqual({ text: "$1 and '$1'", value: "it", $1: "name" });
  });

  it("are prepared once per connection by every copy of the module, as Next.js loads one per bundle on one pool", async () => {
    const opening = [Prisma.sql`SELECT ${"copies"}::text AS "shared"`];
    // The pool hands back the connection it was last given, so the second copy meets a connection the first prepared.
    for (let round = 0; round < 3; round++)
      expect(await transaction(async (_tx, opened) => opened, { opening })).toEqual([[{ shared: "copies" }]]);
    vi.resetModules();
    const copy = await import("@/lib/db");
    expect(copy.transaction).not.toBe(transaction);
    for (let round = 0; round < 3; round++)
      expect(await copy.transaction(async (_tx, opened) => opened, { opening })).toEqual([[{ shared: "copies" }]]);
  });

  it("prepare each once per connection, and a connection whose round trip failed after preparing is not used again", async () => {
    const divide = (by: number) => Prisma.sql`SELECT 10 / ${by}::int AS "quotient"`;
    await expect(transaction(async () => null, { opening: [divide(0)] })).rejects.toThrow(/division by zero/);
    for (const by of [1, 2, 5, 10, 1, 2, 5, 10]) {
      const [[row]] = await transaction(async (_tx, opened) => opened, { opening: [divide(by)] });
      expect(row).toEqual({ quotient: 10 / by });
    }
  });
});

describe("a statement sent with COMMIT", () => {
  it("commits in its own round trip with its values as literals, and the transaction takes nothing after it", async () => {
    const world = await createWorld();
    const name = String.raw`Shop'); DROP TABLE "Tenant"; -- \' é`;
    const sent = await counter.statementsOf(async () => {
      await transaction(async (tx) => {
        const [row] = await tx.$queryThenCommit<{ name: string }[]>(
          Prisma.sql`UPDATE "Tenant" SET "name" = ${name} WHERE "id" = ${world.tenantId} RETURNING "name"`,
        );
        expect(row).toEqual({ name });
        await expect(tx.$queryRaw`SELECT 1`).rejects.toThrow(/the transaction has committed/);
      });
    });
    // BEGIN, then the statement with COMMIT.
    expect(sent).toBe(2);
    expect(await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).toMatchObject({ name });
  });

  it("commits nothing when it fails, and the connection it prepared on is not used again", async () => {
    const world = await createWorld();
    const before = await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } });
    const rename = (by: number) =>
      Prisma.sql`UPDATE "Tenant" SET "name" = 'renamed' WHERE "id" = ${world.tenantId} AND 10 / ${by}::int > 0 RETURNING "name"`;
    await expect(
      transaction(async (tx) => {
        await tx.$executeRaw`UPDATE "Tenant" SET "name" = 'first' WHERE "id" = ${world.tenantId}`;
        return tx.$queryThenCommit(rename(0));
      }),
    ).rejects.toThrow(/division by zero/);
    expect(await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).toMatchObject({ name: before.name });
    for (let round = 0; round < 4; round++) await transaction((tx) => tx.$queryThenCommit(rename(round + 1)));
    expect(await db.tenant.findUniqueOrThrow({ where: { id: world.tenantId } })).toMatchObject({ name: "renamed" });
  });
});
