import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { reconcileRefunds } from "@/lib/payments/refunds";
import { conversationFor, getToolCall, newCallKey, propose } from "./support/api";
import { useOwnExternals } from "./support/externals";
import { startFaultProxy, type FaultProxy, type ProxyFault } from "./support/fault-proxy";
import { expectRefundInvariants } from "./support/invariants";
import { createWorld } from "./support/world";

// Money moves once: the app talks to the provider through a TCP proxy that cuts, resets, delays and rewrites,
// and every scenario ends by comparing the provider's totals with the books.

const externals = useOwnExternals();
let proxy: FaultProxy;
beforeAll(async () => {
  proxy = await startFaultProxy(externals.provider.url);
  process.env.PAYMENT_PROVIDER_URL = proxy.url;
});
afterAll(() => proxy.close());

const refund = (order: string, amount: number) => ({
  name: "issue_refund",
  arguments: { order_id: order, amount_cents: amount, currency: "USD", reason: "damaged" },
});

async function setup() {
  const world = await createWorld();
  const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
  return { world, conversation };
}

describe("only the provider can say no", () => {
  const intermediaries: [string, ProxyFault][] = [400, 401, 403, 404, 408].flatMap((status): [string, ProxyFault][] => [
    [`an intermediary's own ${status}`, { mode: "answer", status }],
    [`the provider's answer rewritten to ${status}`, { mode: "status", status }],
  ]);
  for (const [name, fault] of intermediaries) {
    it(`a cut answer, then ${name}: the refund stays unknown, reconciliation finds it issued, provider = books`, async () => {
      const { world, conversation } = await setup();
      // ord_1001 is 42.00: a 40.00 refund made twice would exceed it.
      proxy.faults([{ mode: "cut" }, fault, fault]);
      const first = await propose(world.keys.agent, conversation, refund(world.orders.o1001, 4000), newCallKey());
      expect(first.json).toMatchObject({ kind: "unavailable", code: "refund.outcome-unknown" });
      expect((await externals.stats()).totalsByOrder[world.orders.o1001]).toBe(4000);

      const again = await propose(world.keys.agent, conversation, refund(world.orders.o1001, 100), newCallKey());
      expect(again.json.code).toBe("refund.in-progress");
      await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
      expect((await getToolCall(world.keys.agent, first.json.id)).json).toMatchObject({ kind: "executed", code: "refund.issued" });
      const third = await propose(world.keys.agent, conversation, refund(world.orders.o1001, 4000), newCallKey());
      expect(third.json.code).toBe("amount.exceeds-refundable");
      await expectRefundInvariants([world.orders.o1001], (await externals.stats()).totalsByOrder);
    });
  }

  it("an intermediary's 4xx on the first attempt, with nothing forwarded, is still not a refusal", async () => {
    const { world, conversation } = await setup();
    proxy.faults([{ mode: "answer", status: 403 }, { mode: "reset" }, { mode: "answer", status: 400 }]);
    const first = await propose(world.keys.agent, conversation, refund(world.orders.o1001, 4000), newCallKey());
    expect(first.json).toMatchObject({ code: "refund.outcome-unknown" });
    await reconcileRefunds({ minAgeMs: 0, tenantId: world.tenantId });
    expect((await getToolCall(world.keys.agent, first.json.id)).json.code).toBe("refund.issued");
    await expectRefundInvariants([world.orders.o1001], (await externals.stats()).totalsByOrder);
  });
});
