import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { startFakeProvider, type FakeProvider } from "@/scripts/dev/fake-provider";
import { startInstance, type AppInstance } from "../support/app-instances";
import { freePort } from "../../scripts/pg-cluster";
import { expectRefundInvariants } from "../support/invariants";
import { createWorld, type World } from "../support/world";

// SIGTERM to a `next start` instance in the middle of a burst of calls: it stops taking new connections,
// finishes the calls it accepted (refunds waiting on a slow provider included), stops its jobs and closes its
// pool, and exits within SHUTDOWN_TIMEOUT_MS.

const PORT = await freePort();
let provider: FakeProvider;
let instance: AppInstance | null = null;

beforeAll(async () => {
  provider = await startFakeProvider();
}, 60_000);

afterAll(async () => {
  await instance?.stop();
  await provider?.close();
});

interface Sent {
  callKey: string;
  status: number | null;
  body: { id?: string; code?: string } | null;
  error: string | null;
  answeredAt: number;
}

async function propose(
  base: string,
  world: World,
  conversation: string,
  body: unknown,
  callKey: string,
): Promise<Sent> {
  try {
    const response = await fetch(`${base}/api/v1/conversations/${conversation}/tool-calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${world.keys.agent}`, "idempotency-key": callKey },
      body: JSON.stringify(body),
    });
    return {
      callKey,
      status: response.status,
      body: (await response.json()) as Sent["body"],
      error: null,
      answeredAt: Date.now(),
    };
  } catch (error) {
    return {
      callKey,
      status: null,
      body: null,
      error: String((error as Error).cause ?? error),
      answeredAt: Date.now(),
    };
  }
}

/** Resolves with the time the port first refuses a new TCP connection, trying every 25 ms. */
async function firstRefusal(port: number): Promise<number> {
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(false);
      });
      socket.once("error", () => resolve(true));
    });
    if (refused) return Date.now();
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("graceful shutdown of one instance", () => {
  it("SIGTERM during a burst: every accepted call gets one final outcome, no 5xx, jobs and pool closed, exit within the limit", async () => {
    const worlds = await Promise.all(
      Array.from({ length: 4 }, () => createWorld({ rateConversationPerMin: 10_000, rateKeyPerMin: 10_000 })),
    );
    instance = await startInstance(PORT, {
      DATABASE_URL: process.env.DATABASE_URL!,
      PAYMENT_PROVIDER_URL: provider.url,
      PAYMENT_PROVIDER_SECRET: provider.secret,
      PAYMENT_PROVIDER_TIMEOUT_MS: "5000",
      TOOLGATE_JOBS: "on",
      OUTBOX_INTERVAL_MS: "200",
      EXPIRY_INTERVAL_MS: "200",
      SHUTDOWN_TIMEOUT_MS: "15000",
    });
    const base = instance.url;
    expect((await fetch(`${base}/api/ready`)).status).toBe(200);
    const conversations = await Promise.all(
      worlds.map(async (world) => {
        const response = await fetch(`${base}/api/v1/conversations`, {
          method: "POST",
          headers: { authorization: `Bearer ${world.keys.agent}` },
          body: JSON.stringify({ customer_id: world.customers.ana }),
        });
        return ((await response.json()) as { id: string }).id;
      }),
    );
    // The first refunds wait 3 s at the provider, so they are in flight when the signal comes.
    await fetch(`${provider.url}/_faults`, {
      method: "POST",
      body: JSON.stringify({ faults: Array.from({ length: 4 }, () => ({ mode: "delay", ms: 3000 })), clear: true }),
    });

    const sends: Promise<Sent>[] = [];
    let signalledAt = 0;
    let refusedAt: Promise<number> | null = null;
    for (let index = 0; index < 80; index++) {
      const which = index % worlds.length;
      const world = worlds[which];
      const body =
        index < 4
          ? {
              name: "issue_refund",
              arguments: { order_id: world.orders.o1001, amount_cents: 1000, currency: "USD", reason: "damaged" },
            }
          : { name: "get_order", arguments: { order_id: world.orders.o1004 } };
      sends.push(propose(base, world, conversations[which], body, `burst-${index}`));
      if (index === 30) {
        process.kill(instance.pid, "SIGTERM");
        signalledAt = Date.now();
        refusedAt = firstRefusal(PORT);
      }
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    const sent = await Promise.all(sends);
    const exit = await instance.exited;
    const exitedAt = Date.now();

    expect(sent.filter((one) => one.status !== null && one.status >= 500)).toEqual([]);
    const answered = sent.filter((one) => one.status !== null);
    expect(answered.every((one) => one.status === 200)).toBe(true);
    // It stopped taking new connections while the refunds in flight at the signal were still being finished.
    // (A call sent after the signal may still be served on a connection that was already open; it is answered
    // and recorded like any other, which the checks below hold it to.)
    const refunds = sent.slice(0, 4);
    expect(await refusedAt!).toBeLessThan(Math.min(...refunds.map((one) => one.answeredAt)));
    expect(refunds.map((one) => one.body?.code)).toEqual([
      "refund.issued",
      "refund.issued",
      "refund.issued",
      "refund.issued",
    ]);
    // The refunds were finished after the signal.
    expect(refunds.every((one) => one.answeredAt > signalledAt)).toBe(true);

    // Exactly the answered calls exist, each with the outcome it was answered with; nothing was accepted silently.
    const calls = await db.toolCall.findMany({
      where: { conversationId: { in: conversations } },
      select: { id: true, code: true, callKey: true },
    });
    expect(calls.map((call) => call.id).sort()).toEqual(answered.map((one) => one.body!.id!).sort());
    for (const one of answered) expect(calls.find((call) => call.id === one.body!.id)?.code).toBe(one.body!.code);
    const stats = (await (await fetch(`${provider.url}/_stats`)).json()) as { totalsByOrder: Record<string, number> };
    await expectRefundInvariants(
      worlds.map((world) => world.orders.o1001),
      stats.totalsByOrder,
    );

    // Next.js exits 143 on SIGTERM once the requests are done; the pool closed before that, inside the limit.
    expect(exit).toBe(143);
    expect(exitedAt - signalledAt).toBeLessThan(15_000);
    const lines = instance
      .output()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.find((line) => line.event === "shutdown.begin")).toMatchObject({
      signal: "SIGTERM",
      timeoutMs: 15000,
    });
    expect(lines.find((line) => line.event === "shutdown.done")).toMatchObject({
      reason: "requests finished",
      code: 143,
    });
    expect(lines.filter((line) => line.level === "error")).toEqual([]);
    for (const world of worlds) expect(instance.output()).not.toContain(world.keys.agent);
    instance = null;
  });
});
