import { describe, expect, it } from "vitest";
import type { Fault, FaultMode } from "@/scripts/dev/fake-provider";
import { reconcileRefunds } from "@/lib/payments/reconcile/reconcile";
import { agentConversation, proposeAsAgent } from "../support/calls";
import { ownExternals } from "../support/externals";
import { expectRefundInvariants } from "../support/invariants";
import { NO_DUPLICATE_GUARD, createWorld, moreOrders, NO_CEILINGS } from "../support/world";

const externals = ownExternals();

const SEED = Number(process.env.CHAOS_SEED ?? 20261202);
const ATTEMPTS = Number(process.env.CHAOS_ATTEMPTS ?? 500);
const WORKERS = 8;

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MODES: (FaultMode | null)[] = [
  null,
  null,
  null,
  null,
  "delay",
  "error_before",
  "unavailable_before",
  "error_after",
  "timeout_after",
  "drop_response",
];

describe("a randomized fault schedule", () => {
  it(`${ATTEMPTS} refund attempts across ${WORKERS} concurrent workers keep provider = issued = refunded <= total`, async () => {
    console.log(`chaos: seed ${SEED}, ${ATTEMPTS} refund attempts, ${WORKERS} workers (CHAOS_SEED to replay)`);
    const next = random(SEED);
    const world = await createWorld({
      ...NO_DUPLICATE_GUARD,
      autoLimitCents: 100_000,
      sessionCapCents: 100_000_000,
      rateConversationPerMin: 100_000,
      rateKeyPerMin: 100_000,
      ...NO_CEILINGS,
    });
    const orders = await moreOrders(world, 24, 30_000, 70_000_000 + Math.floor(next() * 9_000_000));
    const conversations = await Promise.all(Array.from({ length: WORKERS }, () => agentConversation(world)));
    const plan = Array.from({ length: ATTEMPTS }, () => {
      const mode = MODES[Math.floor(next() * MODES.length)];
      const fault: Fault | null = mode
        ? { mode, ms: mode === "delay" ? 50 + Math.floor(next() * 200) : undefined }
        : null;
      return { order: orders[Math.floor(next() * orders.length)], amount: 100 + Math.floor(next() * 2900), fault };
    });

    const codes: Record<string, number> = {};
    let cursor = 0;
    // The app's periodic reconciliation runs alongside, racing the requests that are still settling their own.
    let running = true;
    const reconciler = (async () => {
      while (running) {
        await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await Promise.all(
      conversations.map(async (conversation) => {
        while (cursor < plan.length) {
          const step = plan[cursor++];
          if (step.fault) await externals.faults([step.fault]);
          const response = await proposeAsAgent(world, conversation, {
            name: "issue_refund",
            arguments: { order_id: step.order, amount_cents: step.amount, currency: "USD", reason: "other" },
          });
          codes[response.json.code] = (codes[response.json.code] ?? 0) + 1;
          expect(response.status).toBe(200);
          if (response.json.code === "refund.issued") expect(response.json.kind).toBe("executed");
        }
      }),
    );
    running = false;
    await reconciler;
    console.log(`chaos outcomes: ${JSON.stringify(codes)}`);
    expect(codes["refund.issued"]).toBeGreaterThan(ATTEMPTS / 4);

    await externals.faults([], true);
    for (let round = 0; round < 3; round++) await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    const stats = await externals.stats();
    await expectRefundInvariants(orders, stats.totalsByOrder);
  }, 240_000);
});
