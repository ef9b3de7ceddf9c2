import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ALL_CODES, outcome, type Code } from "@/lib/outcome";
import { newCallKey, propose } from "../support/api";
import { agentConversation } from "../support/calls";
import { ownExternals } from "../support/externals";
import { createWorld, effectSnapshot, NO_CEILINGS, type World } from "../support/world";

// Property-based fuzzing of the whole sequence through the HTTP route: random and mutated envelopes never
// throw, never 500, always answer a SPEC code with its own kind and stage, and act only when the call was
// valid and allowed.

const SEED = Number(process.env.FUZZ_SEED ?? 424242);
const RUNS = Number(process.env.FUZZ_PIPELINE_RUNS ?? 300);
const EXECUTED: Code[] = ["order.read", "refund.issued", "address.updated", "email.queued"];

ownExternals();
let world: World;
let conversation: string;
beforeAll(async () => {
  world = await createWorld({
    rateConversationPerMin: 100_000,
    rateKeyPerMin: 100_000,
    maxAutoWrites: 1_000,
    ...NO_CEILINGS,
  });
  conversation = await agentConversation(world);
});

const names = fc.oneof(
  fc.constantFrom("get_order", "issue_refund", "update_shipping_address", "send_status_email"),
  fc.constantFrom(
    "Get_Order",
    "get_οrder",
    "ｇｅｔ_order",
    "issue_refund ",
    "constructor",
    "__proto__",
    "toString",
    "hasOwnProperty",
    "",
  ),
  fc.string(),
);
const orderIds = () =>
  fc.oneof(
    fc.constantFrom(
      world.orders.o1001,
      world.orders.o1003,
      world.orders.o1004,
      world.orders.o1002,
      world.orders.o2001,
      "ord_0000",
      "ORD_1001",
    ),
    fc.string(),
  );
const edgeNumbers = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    100,
    4200,
    100000,
    100001,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2,
    1e308,
    -1e308,
    0.5,
    1e-7,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const keys = fc.oneof(
  fc.constantFrom("order_id", "amount_cents", "currency", "reason", "line1", "postal_code"),
  fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "customer_id",
    "Customer_ID",
    "tenantId",
    "approved",
    "approval-id",
    "ｃustomer_id",
    "version",
  ),
  fc.string({ maxLength: 12 }),
);
const values = fc.oneof(
  edgeNumbers,
  fc.constantFrom(
    "USD",
    "usd",
    "ＵＳＤ",
    "damaged",
    "other",
    "9410７",
    "94107",
    "1 Elm St\n",
    "a\u0000b",
    "\u202e",
    true,
    false,
    null,
  ),
  fc.string({ maxLength: 40 }),
  fc.jsonValue({ maxDepth: 3 }),
);
const argumentsArb = () =>
  fc.oneof(
    fc.record({
      order_id: orderIds(),
      amount_cents: edgeNumbers,
      currency: fc.constantFrom("USD", "EUR", "usd"),
      reason: fc.constantFrom("damaged", "late", "x"),
    }),
    fc.record({
      order_id: orderIds(),
      line1: fc.string({ maxLength: 90 }),
      postal_code: fc.constantFrom("94107", "９４１０７", "1234", "abcde"),
    }),
    fc.record({ order_id: orderIds() }),
    fc.dictionary(keys, values, { maxKeys: 6 }),
  );

/** Right-shaped calls of each tool with edge values, so the data stages are reached, not only the early ones. */
const coherent = () =>
  fc.oneof(
    fc.record({ name: fc.constant("get_order"), args: fc.record({ order_id: orderIds() }) }),
    fc.record({
      name: fc.constant("issue_refund"),
      args: fc.record({
        order_id: orderIds(),
        amount_cents: fc.oneof(fc.integer({ min: 1, max: 6000 }), edgeNumbers),
        currency: fc.constantFrom("USD", "ＵＳＤ", "EUR"),
        reason: fc.constantFrom("damaged", "late", "other"),
      }),
    }),
    fc.record({
      name: fc.constant("update_shipping_address"),
      args: fc.record({
        order_id: orderIds(),
        line1: fc.string({ minLength: 1, maxLength: 90 }),
        postal_code: fc.constantFrom("94107", "９４１０７", "1234"),
      }),
    }),
    fc.record({ name: fc.constant("send_status_email"), args: fc.record({ order_id: orderIds() }) }),
  );

const calls = () =>
  fc.oneof(
    { arbitrary: coherent(), weight: 3 },
    { arbitrary: fc.record({ name: names, args: argumentsArb() }), weight: 2 },
  );

/** A call, then maybe mutated at the text level: truncation, a duplicated key, wrapping, garbage. */
const bodies = () =>
  fc
    .tuple(calls(), fc.nat({ max: 9 }), fc.nat(), fc.string({ maxLength: 5 }))
    .map(([{ name, args }, mutation, position, garbage]) => {
      const text = JSON.stringify({ name, arguments: args });
      switch (mutation) {
        case 0:
          return text.slice(0, position % (text.length + 1));
        case 1:
          return text.replace(/}$/, `,"name":${JSON.stringify(name)}}`);
        case 2:
          return `{"name":${JSON.stringify(name)},"arguments":${"[".repeat(position % 12)}1${"]".repeat(position % 12)}}`;
        case 3:
          return text.slice(0, position % (text.length + 1)) + garbage + text.slice(position % (text.length + 1));
        case 4:
          return `{"name":${JSON.stringify(name)},"arguments":${JSON.stringify(args)},"extra":1}`;
        default:
          return text;
      }
    });

describe("the whole pipeline under fuzzing", () => {
  it("answers every proposal with a SPEC outcome and acts only on valid, allowed calls", async () => {
    console.log(`fuzz pipeline: seed ${SEED}, ${RUNS} runs`);
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(bodies(), fc.boolean(), async (body, withKey) => {
        const before = await effectSnapshot(world);
        const response = await propose(world.keys.agent, conversation, body, withKey ? newCallKey() : undefined);
        expect([200, 429]).toContain(response.status);
        const { kind, stage, code } = response.json;
        expect(ALL_CODES).toContain(code);
        const expected = outcome(code as Code);
        expect({ kind, stage }).toEqual({ kind: expected.kind, stage: expected.stage });
        expect(response.text).not.toMatch(/at .*\.(ts|js):\d+|PrismaClient|stack/);
        seen.set(code, (seen.get(code) ?? 0) + 1);
        if (!EXECUTED.includes(code as Code)) {
          expect(await effectSnapshot(world)).toEqual(before);
          return;
        }
        // Acted: the envelope must have been a well-formed call of an exposed tool on one of ana's orders.
        const sent = JSON.parse(body) as { name: string; arguments: Record<string, unknown> };
        expect(["get_order", "issue_refund", "update_shipping_address", "send_status_email"]).toContain(sent.name);
        expect([world.orders.o1001, world.orders.o1003, world.orders.o1004]).toContain(
          String(sent.arguments.order_id).normalize("NFKC").trim(),
        );
        expect(
          Object.keys(sent.arguments).some((key) => /customer|tenant|approv|version|user|agent|idempotency/i.test(key)),
        ).toBe(false);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    console.log(`fuzz pipeline outcomes: ${JSON.stringify(Object.fromEntries(seen))}`);
    expect(seen.size).toBeGreaterThan(8);
  }, 300_000);
});
