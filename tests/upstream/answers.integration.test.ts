import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db } from "@/lib/db";
import { closeUpstreams } from "@/lib/upstream/servers/client";
import { resolveUnknownCall, unknownCalls } from "@/lib/upstream/calls/resolve";
import { MAX_STORED_DEPTH } from "@/lib/upstream/calls/storable";
import { conversationFor, newCallKey, propose } from "../support/api";
import { supervisorOf } from "../support/calls";
import { createWorld, type World } from "../support/world";
import { addTestServer } from "./support";
import { startTestUpstream, type TestUpstream } from "./test-upstream";

// What a call that ran upstream leaves when its answer is hostile or cannot be recorded: never "nothing happened".
// An answer PostgreSQL's jsonb refuses as sent is passed on cleaned; a failure to record the answer after the send
// leaves the call `upstream.outcome-unknown` and on the desk's list of lost answers, for a supervisor to resolve.

const faults = vi.hoisted(() => ({ settle: false, move: false }));
vi.mock("@/lib/upstream/sql", async (importOriginal) => {
  const real = await importOriginal<typeof import("@/lib/upstream/sql")>();
  return {
    ...real,
    // A database that fails after the send: it cannot record the answer and, with `move`, not even mark the call.
    settleSending: ((...args) => {
      if (faults.settle) throw new Error("forced: the answer cannot be recorded");
      return real.settleSending(...args);
    }) as typeof real.settleSending,
    moveUpstreamCall: (async (client, id, from, to) => {
      if (faults.move && to === "unknown") throw new Error("forced: the call cannot be marked unknown");
      return real.moveUpstreamCall(client, id, from, to);
    }) as typeof real.moveUpstreamCall,
  };
});

let world: World;
let upstream: TestUpstream;
const SECRET = "answers-bearer-secret";
const TOOLS = ["tickets__create_ticket", "tickets__count_tickets"];

beforeAll(async () => {
  process.env.OUTBOUND_ALLOWED_HOSTS = "127.0.0.1";
  world = await createWorld();
  upstream = await startTestUpstream(SECRET);
  await addTestServer(world, upstream, "tickets", {
    create_ticket: "hold",
    count_tickets: "allow",
  });
});

afterEach(() => {
  Object.assign(faults, { settle: false, move: false });
  upstream.state.answer = null;
});

afterAll(async () => {
  await closeUpstreams();
  await upstream.close();
});

const count = async () => {
  const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana, tools: TOOLS });
  return propose(world.keys.agent, conversation, { name: "tickets__count_tickets", arguments: {} }, newCallKey());
};
const status = async (id: string) => (await db.upstreamCall.findUniqueOrThrow({ where: { toolCallId: id } })).status;
const listed = async (id: string) => (await unknownCalls(world.tenantId)).some((call) => call.toolCallId === id);

describe("an upstream's answer jsonb refuses as sent", () => {
  it("is passed on with each NUL and broken surrogate replaced, and recorded as called", async () => {
    upstream.state.answer = {
      content: [{ type: "text", text: "a\u0000b \ud800" }],
      structuredContent: { "k\u0000": "x\u0000y", list: ["\udc00z"] },
    };
    const read = await count();
    expect(read.json).toMatchObject({
      code: "upstream.called",
      model: {
        status: "ok",
        result: {
          content: [{ type: "text", text: "a\ufffdb \ufffd" }],
          structuredContent: { "k\ufffd": "x\ufffdy", list: ["\ufffdz"] },
          isError: false,
        },
      },
    });
    expect(await status(read.json.id)).toBe("answered");
    expect((await db.toolCall.findUniqueOrThrow({ where: { id: read.json.id } })).code).toBe("upstream.called");
  });

  it("is replaced by a note when it nests deeper than toolgate passes on", async () => {
    upstream.state.answer = {
      content: [],
      structuredContent: JSON.parse(`{"a":${"[".repeat(200)}1${"]".repeat(200)}}`),
    };
    const read = await count();
    expect(read.json).toMatchObject({ code: "upstream.called", model: { status: "ok", result: { isError: true } } });
    expect(JSON.stringify(read.json.model)).toContain(`more than ${MAX_STORED_DEPTH} levels deep`);
    expect(await status(read.json.id)).toBe("answered");
  });
});

describe("a failure to record the answer after the send", () => {
  it("answers pending_confirmation and lists the call as lost, for a supervisor to resolve", async () => {
    const before = upstream.state.received.length;
    faults.settle = true;
    const read = await count();
    expect(upstream.state.received).toHaveLength(before + 1);
    expect(read.json).toMatchObject({ code: "upstream.outcome-unknown", model: { status: "pending_confirmation" } });
    expect(await status(read.json.id)).toBe("unknown");
    expect(await listed(read.json.id)).toBe(true);
    faults.settle = false;
    expect(await resolveUnknownCall(supervisorOf(world), read.json.id, true)).toMatchObject({
      ok: true,
      outcome: { code: "upstream.resolved-done" },
    });
    expect((await db.toolCall.findUniqueOrThrow({ where: { id: read.json.id } })).code).toBe("upstream.resolved-done");
  });

  it("does the same for an approved held call", async () => {
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana, tools: TOOLS });
    const held = await propose(
      world.keys.agent,
      conversation,
      { name: "tickets__create_ticket", arguments: { title: "Approved, answer lost" } },
      newCallKey(),
    );
    expect(held.json.code).toBe("approval.required");
    faults.settle = true;
    const approved = await approveRequest(supervisorOf(world), held.json.approval!.id);
    expect(approved).toMatchObject({ ok: true, outcome: { code: "upstream.outcome-unknown" } });
    expect(upstream.state.received.at(-1)?.arguments).toEqual({ title: "Approved, answer lost" });
    expect(await status(held.json.id)).toBe("unknown");
    expect(await listed(held.json.id)).toBe(true);
  });

  it("lists a call left `sending` (nothing could be written) once its timeout and a minute have passed", async () => {
    Object.assign(faults, { settle: true, move: true });
    const read = await count();
    expect(read.json).toMatchObject({ code: "upstream.outcome-unknown", model: { status: "pending_confirmation" } });
    Object.assign(faults, { settle: false, move: false });
    expect(await status(read.json.id)).toBe("sending");
    expect(await listed(read.json.id)).toBe(false);
    expect(await resolveUnknownCall(supervisorOf(world), read.json.id, false)).toMatchObject({
      ok: false,
      code: "call.not-unknown",
    });

    // As a process that died mid-call leaves it: sent longer ago than UPSTREAM_TIMEOUT_MS (30 s) and a minute.
    await db.upstreamCall.update({
      where: { toolCallId: read.json.id },
      data: { sentAt: new Date(Date.now() - 91_000) },
    });
    expect(await listed(read.json.id)).toBe(true);
    expect(await resolveUnknownCall(supervisorOf(world), read.json.id, false)).toMatchObject({
      ok: true,
      outcome: { code: "upstream.resolved-not-done" },
    });
    expect(await status(read.json.id)).toBe("resolved");
    expect(await listed(read.json.id)).toBe(false);
  });
});
