import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { reconcileRefunds } from "@/lib/payments/reconcile/reconcile";
import { newCallKey } from "../support/api";
import { agentConversation } from "../support/calls";
import { ownExternals } from "../support/externals";
import { expectRefundInvariants } from "../support/invariants";
import { createWorld, type World } from "../support/world";

// A child process runs the refund executor and is killed with SIGKILL at chosen points; a "restart" (this
// process, fresh) reconciles, and the invariants must hold with no double refund.

const externals = ownExternals();

function runChild(world: World, conversation: string, order: string, amount: number): ChildProcess {
  return spawn(
    process.execPath,
    [
      path.join("node_modules", "tsx", "dist", "cli.mjs"),
      "--tsconfig",
      "tsconfig.json",
      "tests/support/refund-child.ts",
      world.users.agent,
      world.tenantId,
      conversation,
      order,
      String(amount),
      newCallKey(),
    ],
    // "react-server" makes the server-only marker resolve to its empty build outside Next.js.
    { env: { ...process.env, NODE_OPTIONS: "--conditions=react-server" }, stdio: ["ignore", "pipe", "pipe"] },
  );
}

async function until(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", () => resolve())));

async function crashAndRecover(
  point: (order: string, before: number) => Promise<void>,
  faults: Parameters<typeof externals.faults>[0],
) {
  const world = await createWorld();
  const conversation = await agentConversation(world);
  await externals.faults(faults, true);
  const before = (await externals.stats()).refundRequests;
  const child = runChild(world, conversation, world.orders.o1004, 3000);
  await point(world.orders.o1004, before);
  child.kill("SIGKILL");
  await killed(child);
  await externals.faults([], true);
  // The killed process's request may still be with the provider, which answers a re-send of that key with
  // 409 idempotency_key_in_use until it finishes: reconcile until the provider has settled every key.
  await until(async () => {
    await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    return (
      (await db.refund.count({ where: { tenantId: world.tenantId, status: { notIn: ["issued", "released"] } } })) === 0
    );
  });
  await expectRefundInvariants([world.orders.o1004], (await externals.stats()).totalsByOrder);
  return world;
}

const reserved = (order: string) => async () =>
  (await db.refund.count({ where: { orderId: order, status: "reserved" } })) === 1;

describe("crash safety of the refund executor", () => {
  it("killed after the reservation committed, before the provider acted", async () => {
    const world = await crashAndRecover(
      async (order, before) => {
        await until(reserved(order));
        await until(async () => (await externals.stats()).refundRequests > before);
      },
      [{ mode: "delay", ms: 3000 }],
    );
    expect((await db.refund.findMany({ where: { orderId: world.orders.o1004 } })).map((row) => row.status)).toEqual([
      "issued",
    ]);
    expect((await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).refundedCents).toBe(3000);
  });

  it("killed after the provider acted, before the settle", async () => {
    const world = await crashAndRecover(
      async (order) => {
        await until(reserved(order));
        await until(async () => ((await externals.stats()).totalsByOrder[order] ?? 0) === 3000);
      },
      [{ mode: "timeout_after" }, { mode: "timeout_after" }, { mode: "timeout_after" }],
    );
    expect((await externals.stats()).totalsByOrder[world.orders.o1004]).toBe(3000);
    expect((await db.refund.findMany({ where: { orderId: world.orders.o1004 } })).map((row) => row.status)).toEqual([
      "issued",
    ]);
  });

  it("killed at moments spread over the whole call, from reservation to settle: reconciliation reaches a consistent end", async () => {
    const statuses: string[] = [];
    for (const delayMs of [0, 5, 20, 60, 110, 150, 250]) {
      const world = await crashAndRecover(
        async (order) => {
          await until(async () => (await db.refund.count({ where: { orderId: order } })) === 1);
          await new Promise((resolve) => setTimeout(resolve, delayMs));
        },
        [{ mode: "delay", ms: 100 }],
      );
      statuses.push(...(await db.refund.findMany({ where: { orderId: world.orders.o1004 } })).map((row) => row.status));
    }
    // Every run reserved before it died, so every run must end with exactly one issued refund.
    expect(statuses).toEqual(Array(7).fill("issued"));
  }, 120_000);
});
