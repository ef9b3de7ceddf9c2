import { describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { getOrder } from "@/lib/tools/get-order";
import { propose } from "../support/api";
import { agentConversation, proposeAsAgent } from "../support/calls";
import { createWorld, effectSnapshot } from "../support/world";

// Positive controls: a gateway that refuses everything would pass every refusal test. Each tool executes
// once with exactly the intended effect and nothing else.

describe("each tool executes once with exactly its effect", () => {
  it("get_order returns exactly the public fields and changes nothing", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const before = await effectSnapshot(world);
    const read = await propose(world.keys.agent, conversation, {
      name: "get_order",
      arguments: { order_id: world.orders.o1001 },
    });
    expect(read.json).toMatchObject({
      kind: "executed",
      stage: "execute",
      code: "order.read",
      model: { status: "ok" },
    });
    expect(read.json.result).toEqual({
      order_id: world.orders.o1001,
      status: "delivered",
      total_cents: 4200,
      refunded_cents: 0,
      currency: "USD",
    });
    expect(await effectSnapshot(world)).toEqual(before);
  });

  it("issue_refund records one refund, moves the order's refunded total and version, and spends the budget", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const before = await effectSnapshot(world);
    const response = await proposeAsAgent(world, conversation, {
      name: "issue_refund",
      arguments: { order_id: world.orders.o1001, amount_cents: 1200, currency: "USD", reason: "wrong_item" },
    });
    expect(response.json).toMatchObject({
      kind: "executed",
      code: "refund.issued",
      result: { refunded_cents: 1200, amount_cents: 1200 },
    });
    const after = await effectSnapshot(world);
    expect(after.refunds).toHaveLength(1);
    expect(after.refunds[0]).toMatchObject({
      orderId: world.orders.o1001,
      amountCents: 1200,
      currency: "USD",
      reason: "wrong_item",
      status: "issued",
      toolCallId: response.json.id,
    });
    const order = after.orders.find((row) => row.id === world.orders.o1001)!;
    // Reserved (version 2), then settled from the provider's answer (version 3), flag cleared.
    expect(order).toMatchObject({ refundedCents: 1200, version: 3, refundPending: false });
    expect(after.orders.filter((row) => row.id !== world.orders.o1001)).toEqual(
      before.orders.filter((row) => row.id !== world.orders.o1001),
    );
    expect(after.addressChanges).toEqual([]);
    expect(after.outbox).toEqual([]);
    expect(after.conversations.find((row) => row.id === conversation)).toMatchObject({
      writesMade: 1,
      irreversibleCents: 1200,
    });
  });

  it("update_shipping_address changes the address of a processing order and keeps the old one", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const response = await proposeAsAgent(world, conversation, {
      name: "update_shipping_address",
      arguments: { order_id: world.orders.o1003, line1: "  42 Main St ", postal_code: "10001" },
    });
    expect(response.json).toMatchObject({ kind: "executed", code: "address.updated" });
    const after = await effectSnapshot(world);
    expect(after.orders.find((row) => row.id === world.orders.o1003)).toMatchObject({
      addressLine1: "42 Main St",
      postalCode: "10001",
      version: 2,
      refundedCents: 0,
    });
    expect(after.addressChanges).toEqual([
      expect.objectContaining({
        fromLine1: "1 Elm St",
        fromPostalCode: "94107",
        toLine1: "42 Main St",
        toPostalCode: "10001",
      }),
    ]);
    expect(after.refunds).toEqual([]);
    expect(after.outbox).toEqual([]);
    expect(after.conversations.find((row) => row.id === conversation)).toMatchObject({
      writesMade: 1,
      irreversibleCents: 0,
    });
  });

  it("send_status_email queues one message to the order's customer, never a model-chosen recipient", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const response = await proposeAsAgent(world, conversation, {
      name: "send_status_email",
      arguments: { order_id: world.orders.o1001 },
    });
    expect(response.json).toMatchObject({ kind: "executed", code: "email.queued" });
    const after = await effectSnapshot(world);
    const ana = await db.customer.findUniqueOrThrow({ where: { id: world.customers.ana } });
    expect(after.outbox).toEqual([
      expect.objectContaining({ recipient: ana.email, status: "pending", orderId: world.orders.o1001 }),
    ]);
    expect(after.refunds).toEqual([]);
    expect(after.conversations.find((row) => row.id === conversation)).toMatchObject({
      writesMade: 1,
      irreversibleCents: 0,
    });

    const redirected = await proposeAsAgent(world, conversation, {
      name: "send_status_email",
      arguments: { order_id: world.orders.o1001, to: "evil@example.test" },
    });
    expect(redirected.json.code).toBe("schema.invalid");
  });

  it("every executed call is in the decision log with its tool, order and latency, and no argument values", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const response = await proposeAsAgent(world, conversation, {
      name: "update_shipping_address",
      arguments: { order_id: world.orders.o1003, line1: "77 Secret Lane", postal_code: "10001" },
    });
    const [row] = await db.decisionLog.findMany({ where: { toolCallId: response.json.id } });
    expect(row).toMatchObject({
      toolName: "update_shipping_address",
      orderId: world.orders.o1003,
      kind: "executed",
      code: "address.updated",
      conversationId: conversation,
    });
    expect(row.latencyMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(row, (_key, value) => (typeof value === "bigint" ? String(value) : value))).not.toContain(
      "Secret",
    );
  });

  it("records how long the decision took", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const original = getOrder.execute;
    // A tool's effect is decided without waiting on anything: a slow one spins.
    const slow = vi.spyOn(getOrder, "execute").mockImplementationOnce((context) => {
      const until = performance.now() + 60;
      while (performance.now() < until);
      return original(context);
    });
    try {
      const response = await propose(world.keys.agent, conversation, {
        name: "get_order",
        arguments: { order_id: world.orders.o1001 },
      });
      const [row] = await db.decisionLog.findMany({ where: { toolCallId: response.json.id } });
      expect(row.latencyMs).toBeGreaterThanOrEqual(55);
      expect(row.latencyMs).toBeLessThan(5000);
    } finally {
      slow.mockRestore();
    }
  });

  it("every decision of a refund names its order, from the reservation to the settlement", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const response = await proposeAsAgent(world, conversation, {
      name: "issue_refund",
      arguments: { order_id: world.orders.o1001, amount_cents: 500, currency: "USD", reason: "late" },
    });
    const log = await db.decisionLog.findMany({ where: { toolCallId: response.json.id }, orderBy: { id: "asc" } });
    expect(log.map((row) => [row.code, row.orderId, row.toolName, row.tenantId])).toEqual([
      ["refund.outcome-unknown", world.orders.o1001, "issue_refund", world.tenantId],
      ["refund.issued", world.orders.o1001, "issue_refund", world.tenantId],
    ]);
  });
});
