import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db } from "@/lib/db";
import { CALLS_CHANNEL } from "@/lib/live/sql";
import { pruneLiveWatches, watchConversation } from "@/lib/live";
import { propose } from "../support/api";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { createWorld, type World } from "../support/world";

// Live views are told of changes through NOTIFY, and only for conversations someone watches: PostgreSQL
// serializes the commits of all notifying transactions, so a notice on every call would queue every call.

let listener: pg.Client;
const notices: string[] = [];
let world: World;

beforeAll(async () => {
  listener = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await listener.connect();
  listener.on("notification", (message) => notices.push(message.payload ?? ""));
  await listener.query(`LISTEN ${CALLS_CHANNEL}`);
  world = await createWorld();
});
afterAll(async () => {
  await listener.end();
});

const read = () => ({ name: "get_order", arguments: { order_id: world.orders.o1001 } });
const noticesFor = (conversation: string) => notices.filter((payload) => payload === conversation).length;

/** Waits for a notice for `conversation`, or long enough that one would have arrived. */
async function settle(conversation: string, expected: number): Promise<number> {
  const deadline = Date.now() + (expected > 0 ? 5000 : 300);
  while (Date.now() < deadline && noticesFor(conversation) < expected)
    await new Promise((resolve) => setTimeout(resolve, 20));
  if (expected > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  return noticesFor(conversation);
}

describe("live-view notices", () => {
  it("go to a watched conversation and not to an unwatched one, and stop when the watch ends", async () => {
    const watched = await agentConversation(world);
    const unwatched = await agentConversation(world);
    const watch = await watchConversation(watched);

    expect((await propose(world.keys.agent, unwatched, read())).json.code).toBe("order.read");
    expect((await propose(world.keys.agent, watched, read())).json.code).toBe("order.read");
    expect(await settle(watched, 1)).toBe(1);
    expect(await settle(unwatched, 0)).toBe(0);
    // The call was recorded either way.
    expect(await db.toolCall.count({ where: { conversationId: unwatched } })).toBe(1);

    await watch.end();
    expect((await propose(world.keys.agent, watched, read())).json.code).toBe("order.read");
    expect(await settle(watched, 0)).toBe(1);
  });

  it("an expired watch is no watch, and pruning removes it; a refresh brings a pruned watch back", async () => {
    const conversation = await agentConversation(world);
    const watch = await watchConversation(conversation);
    await db.liveWatch.updateMany({
      where: { conversationId: conversation },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await propose(world.keys.agent, conversation, read())).json.code).toBe("order.read");
    expect(await settle(conversation, 0)).toBe(0);

    expect(await pruneLiveWatches()).toBeGreaterThanOrEqual(1);
    expect(await db.liveWatch.count({ where: { conversationId: conversation } })).toBe(0);
    await watch.refresh();
    expect((await propose(world.keys.agent, conversation, read())).json.code).toBe("order.read");
    expect(await settle(conversation, 1)).toBe(1);
    await watch.end();
  });

  it("a supervisor's decision on a watched conversation's call is announced too", async () => {
    const conversation = await agentConversation(world);
    const pending = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
    expect(pending.json.code).toBe("approval.required");
    expect(await settle(conversation, 0)).toBe(0);

    const watch = await watchConversation(conversation);
    const decided = await approveRequest(
      { userId: world.users.supervisor, tenantId: world.tenantId, role: "SUPERVISOR" },
      pending.json.approval!.id,
    );
    expect(decided).toMatchObject({ ok: true, status: "approved" });
    expect(await settle(conversation, 1)).toBeGreaterThanOrEqual(1);
    await watch.end();
  });
});
