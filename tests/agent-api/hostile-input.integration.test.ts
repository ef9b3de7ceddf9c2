import fc from "fast-check";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as mcpRoute } from "@/app/api/mcp/route";
import { POST as openRoute } from "@/app/api/v1/conversations/route";
import { POST as proposeRoute } from "@/app/api/v1/conversations/[id]/tool-calls/route";
import { GET as toolsRoute } from "@/app/api/v1/conversations/[id]/tools/route";
import { GET as toolCallRoute } from "@/app/api/v1/tool-calls/[id]/route";
import { db } from "@/lib/db";
import { newCallKey } from "../support/api";
import { agentConversation } from "../support/calls";
import { createWorld, effectSnapshot, type World } from "../support/world";

// Hostile input through the real route handlers: generated ids in the path, the query, the body and the
// headers never get a 5xx, never log an error (a client's mistake is no operator's alarm) and never act.

const SEED = Number(process.env.FUZZ_SEED ?? 151515);
const RUNS = Number(process.env.FUZZ_HOSTILE_RUNS ?? 120);
const BASE = "http://toolgate.test/api";

let world: World;
let conversation: string;
beforeAll(async () => {
  world = await createWorld({ rateConversationPerMin: 100_000, rateKeyPerMin: 100_000, maxAutoWrites: 1_000 });
  conversation = await agentConversation(world);
});

const errors = vi.spyOn(console, "error");
afterEach(() => errors.mockClear());

/** Ids as an attacker writes them: NUL, lone surrogates, escapes, very long, unicode, SQL-ish, or a real one. */
const hostileIds = () =>
  fc.oneof(
    fc.constantFrom(
      "\u0000",
      "a\u0000b",
      "cu_ana\u0000",
      "\ud800",
      "x\udfffy",
      "%00",
      "%ff",
      "..",
      "../../etc",
      "' OR 1=1 --",
      "",
      " ",
      "ord_1001\n",
    ),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.string({ minLength: 101, maxLength: 5000 }),
    fc.constantFrom(world.customers.ana, world.orders.o1004, conversation),
  );
const headerSafe = (value: string) => value.replace(/[^\t\x20-\x7e]/g, "").slice(0, 4000);
const auth = () => ({ authorization: `Bearer ${world.keys.agent}` });
const params = (id: string) => ({ params: Promise.resolve({ id }) });

async function settle(response: Response): Promise<{ status: number; text: string }> {
  return { status: response.status, text: await response.text() };
}

/** Every agent route, each taking the generated id wherever a client could put one. */
function routes(id: string, body: string): Promise<{ status: number; text: string }>[] {
  // A URL cannot carry a lone surrogate (the proxy refuses its escape, tests/hardening/security.test.ts).
  const path = encodeURIComponent(id.replace(/[\ud800-\udfff]/g, "\ufffd"));
  const json = { ...auth(), "content-type": "application/json" };
  return [
    openRoute(
      new Request(`${BASE}/v1/conversations`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ customer_id: id }),
      }),
    ).then(settle),
    openRoute(
      new Request(`${BASE}/v1/conversations`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ customer_id: world.customers.ana, order_id: id, tools: [id] }),
      }),
    ).then(settle),
    openRoute(new Request(`${BASE}/v1/conversations`, { method: "POST", headers: json, body })).then(settle),
    toolCallRoute(new Request(`${BASE}/v1/tool-calls/${path}`, { headers: auth() }), params(id)).then(settle),
    toolsRoute(
      new Request(`${BASE}/v1/conversations/${path}/tools?format=${path}`, { headers: auth() }),
      params(id),
    ).then(settle),
    proposeRoute(
      new Request(`${BASE}/v1/conversations/${path}/tool-calls`, { method: "POST", headers: json, body }),
      params(id),
    ).then(settle),
    proposeRoute(
      new Request(`${BASE}/v1/conversations/${conversation}/tool-calls?format=${path}`, {
        method: "POST",
        headers: { ...json, "idempotency-key": headerSafe(id) || "k" },
        body: JSON.stringify({
          name: "issue_refund",
          arguments: { order_id: id, amount_cents: 100, currency: "USD", reason: id },
        }),
      }),
      params(conversation),
    ).then(settle),
    proposeRoute(
      new Request(`${BASE}/v1/conversations/${conversation}/tool-calls`, {
        method: "POST",
        headers: { ...json, "idempotency-key": newCallKey() },
        body: JSON.stringify({ name: "get_order", arguments: { [id]: id, order_id: world.orders.o1004 } }),
      }),
      params(conversation),
    ).then(settle),
    mcpRoute(
      new Request(`${BASE}/mcp?conversation=${path}`, {
        method: "POST",
        headers: { ...json, accept: "application/json, text/event-stream", "x-toolgate-conversation": headerSafe(id) },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "get_order", arguments: { order_id: id } },
        }),
      }),
    ).then(settle),
  ];
}

describe("hostile ids and bodies on every agent route", () => {
  it("answer 4xx (or a recorded refusal), log nothing and change nothing", async () => {
    const conversationsBefore = await db.conversation.count({ where: { tenantId: world.tenantId } });
    const before = await effectSnapshot(world);
    await fc.assert(
      fc.asyncProperty(
        hostileIds(),
        fc.oneof(
          fc.string({ unit: "binary", maxLength: 200 }),
          fc.json(),
          fc.constantFrom('{"customer_id":"\\u0000"}', '{"name":"get_order","arguments":{"order_id":"\\ud800"}}'),
        ),
        async (id, body) => {
          const answers = await Promise.all(routes(id, body));
          for (const answer of answers) expect(answer.status, answer.text).toBeLessThan(500);
          expect(answers.map((answer) => answer.text).join("\n")).not.toContain("host.error");
          expect(errors).not.toHaveBeenCalled();
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    // Ids that name nothing opened nothing; the real customer may have opened conversations, which act on nothing.
    const after = await effectSnapshot(world);
    expect({ ...after, conversations: undefined }).toEqual({ ...before, conversations: undefined });
    expect(after.conversations.filter((row) => row.writesMade > 0 || row.irreversibleCents > 0)).toEqual([]);
    expect(await db.conversation.count({ where: { tenantId: world.tenantId } })).toBeGreaterThanOrEqual(
      conversationsBefore,
    );
  });

  it("names the failure: a NUL in a body id is request.invalid, in an envelope parse.malformed", async () => {
    const [customer] = routes("cu_ana\u0000", "{}");
    expect(await customer).toMatchObject({ status: 400, text: expect.stringContaining("request.invalid") });
    const nul = await settle(
      await proposeRoute(
        new Request(`${BASE}/v1/conversations/${conversation}/tool-calls`, {
          method: "POST",
          headers: auth(),
          body: '{"name":"get_order","arguments":{"order_id":"ord_1001","x\\u0000":1}}',
        }),
        params(conversation),
      ),
    );
    expect(JSON.parse(nul.text)).toMatchObject({ kind: "rejected", stage: "parse", code: "parse.malformed" });
  });
});

// The REST API's well-formed paths skip proxy.ts (decision 032); its wrapper does what the proxy did for them.
describe("what the proxy did for the REST API", () => {
  const agentBuckets = () => db.rateBucket.findMany({ where: { key: { contains: world.users.agent } } });

  // Next.js re-encodes a query it cannot decode (`%ff` arrives as U+FFFD, refused by the route's own checks), so what
  // reaches the wrapper malformed is a NUL; the in-process request here also carries the broken escapes unchanged.
  it("a query string no route can read is 400 request.malformed-url before the key is looked up or counted", async () => {
    const before = await agentBuckets();
    for (const query of ["?wait=%00", "?x%00=1", "?wait=%e0%80", "?wait=5%"]) {
      const answer = await settle(
        await toolCallRoute(new Request(`${BASE}/v1/tool-calls/call_none${query}`, { headers: auth() }), params("x")),
      );
      expect([query, answer.status, JSON.parse(answer.text).error.code]).toEqual([query, 400, "request.malformed-url"]);
    }
    expect(await agentBuckets()).toEqual(before);
    expect(errors).not.toHaveBeenCalled();
  });

  it("sets HSTS on every answer when the app is served over HTTPS, and not otherwise", async () => {
    const ask = async () =>
      (
        await proposeRoute(
          new Request(`${BASE}/v1/conversations/${conversation}/tool-calls`, { method: "POST", body: "{}" }),
          params(conversation),
        )
      ).headers.get("strict-transport-security");
    expect(await ask()).toBeNull();
    vi.stubEnv("NEXTAUTH_URL", "https://toolgate.example");
    try {
      expect(await ask()).toMatch(/^max-age=\d{8,}; includeSubDomains$/);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
