import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { startFakeProvider, type FakeProvider } from "@/scripts/dev/fake-provider";
import { callAction, sessionCookie, startInstance, type AppInstance } from "../support/app-instances";
import { freePort } from "../../scripts/pg-cluster";
import { expectRefundInvariants } from "../support/invariants";
import { createWorld } from "../support/world";

// Two app instances of the production build against one PostgreSQL: every exactly-once guarantee must hold
// across processes, not only inside one.

let instances: AppInstance[] = [];
let provider: FakeProvider;

beforeAll(async () => {
  provider = await startFakeProvider();
  const env = {
    DATABASE_URL: process.env.DATABASE_URL!,
    PAYMENT_PROVIDER_URL: provider.url,
    PAYMENT_PROVIDER_SECRET: provider.secret,
  };
  instances = await Promise.all([startInstance(await freePort(), env), startInstance(await freePort(), env)]);
}, 120_000);

afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
  await provider?.close();
});

const pick = (index: number) => instances[index % instances.length].url;
const stats = async () =>
  (await (await fetch(`${provider.url}/_stats`)).json()) as { totalsByOrder: Record<string, number>; refunds: number };

async function open(base: string, key: string, customer: string): Promise<string> {
  const response = await fetch(`${base}/api/v1/conversations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ customer_id: customer }),
  });
  return ((await response.json()) as { id: string }).id;
}

async function propose(base: string, key: string, conversation: string, body: unknown, callKey: string) {
  const response = await fetch(`${base}/api/v1/conversations/${conversation}/tool-calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "idempotency-key": callKey },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    json: (await response.json()) as {
      id: string;
      code: string;
      kind: string;
      replayed?: boolean;
      approval?: { id: string };
    },
  };
}

const refund = (order: string, amount: number) => ({
  name: "issue_refund",
  arguments: { order_id: order, amount_cents: amount, currency: "USD", reason: "damaged" },
});

describe("two app instances, one PostgreSQL", () => {
  it("100 concurrent identical proposals with one call key, spread over both instances, refund once", async () => {
    const world = await createWorld({ rateConversationPerMin: 10_000 });
    const conversation = await open(pick(0), world.keys.agent, world.customers.ana);
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        propose(pick(index), world.keys.agent, conversation, refund(world.orders.o1004, 2500), "one-key"),
      ),
    );
    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect(new Set(responses.map((response) => response.json.id)).size).toBe(1);
    expect(responses.filter((response) => !response.json.replayed)).toHaveLength(1);
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(1);
    await expectRefundInvariants([world.orders.o1004], (await stats()).totalsByOrder);
  });

  it("50 concurrent different refunds on one order whose sum exceeds its total never refund more than the total", async () => {
    const world = await createWorld({ rateKeyPerMin: 10_000 });
    const conversations = await Promise.all(
      Array.from({ length: 50 }, (_, index) => open(pick(index), world.keys.agent, world.customers.ana)),
    );
    const responses = await Promise.all(
      conversations.map((conversation, index) =>
        propose(pick(index), world.keys.agent, conversation, refund(world.orders.o1004, 1000), `k-${index}`),
      ),
    );
    expect(responses.every((response) => response.status === 200)).toBe(true);
    const issued = responses.filter((response) => response.json.code === "refund.issued").length;
    expect(issued).toBeGreaterThan(0);
    const order = await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } });
    expect(order.refundedCents).toBe(issued * 1000);
    expect(order.refundedCents).toBeLessThanOrEqual(order.totalCents);
    await expectRefundInvariants([world.orders.o1004], (await stats()).totalsByOrder);
  });

  it("20 concurrent approvals of one request, through the real server action on both instances, execute once", async () => {
    const world = await createWorld();
    const conversation = await open(pick(0), world.keys.agent, world.customers.ana);
    const pending = await propose(pick(1), world.keys.agent, conversation, refund(world.orders.o1004, 8000), "held");
    expect(pending.json.code).toBe("approval.required");
    const supervisor = await db.user.findUniqueOrThrow({ where: { id: world.users.supervisor } });
    const cookie = await sessionCookie({
      id: supervisor.id,
      role: "SUPERVISOR",
      tenantId: world.tenantId,
      email: supervisor.email,
    });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        callAction(
          pick(index),
          "/approvals",
          "decideApprovalsAction",
          [{ ids: [pending.json.approval!.id], decision: "approve" }],
          cookie,
        ),
      ),
    );
    expect(answers.filter((text) => text.includes('"status":"approved"'))).toHaveLength(1);
    expect(answers.filter((text) => text.includes("approval.already-decided"))).toHaveLength(19);
    expect(await db.refund.count({ where: { orderId: world.orders.o1004 } })).toBe(1);
    expect((await db.order.findUniqueOrThrow({ where: { id: world.orders.o1004 } })).refundedCents).toBe(8000);
    await expectRefundInvariants([world.orders.o1004], (await stats()).totalsByOrder);
  });
});
