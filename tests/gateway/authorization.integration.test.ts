import { beforeAll, describe, expect, it } from "vitest";
import { conversationFor, newCallKey, openConversation, propose } from "../support/api";
import { agentConversation } from "../support/calls";
import { expectNoEffect } from "../support/effects";
import { createWorld, type World } from "../support/world";

// Every (agent, customer, order, tool) combination across both tenants. Whoever does not own an order
// gets exactly the bytes a missing order gets, and nothing changes anywhere.

let world: World;
beforeAll(async () => {
  world = await createWorld();
});

const MISSING = "ord_99999999";
const withoutId = (text: string) => text.replace(/^\{"id":"call_[A-Za-z0-9_-]+",/, "{");

function argumentsFor(tool: string, order: string): Record<string, unknown> {
  switch (tool) {
    case "issue_refund":
      return { order_id: order, amount_cents: 100, currency: "USD", reason: "damaged" };
    case "update_shipping_address":
      return { order_id: order, line1: "7 New St", postal_code: "94107" };
    default:
      return { order_id: order };
  }
}

const TOOLS = ["get_order", "issue_refund", "update_shipping_address", "send_status_email"];

describe("authorization matrix", () => {
  // Every header but the request id, which is new for every request.
  const headersBut = (headers: Headers) => [...headers.entries()].filter(([name]) => name !== "x-request-id");

  it("non-owners of an order always get the bytes of a missing order, with no effect", async () => {
    const agents = [
      { key: world.keys.agent, customers: [world.customers.ana, world.customers.ben] },
      { key: world.keys.agent2, customers: [world.customers.ana, world.customers.ben] },
      { key: world.keys.otherAgent, customers: [world.customers.gil] },
    ];
    const owner: Record<string, string> = {
      [world.orders.o1001]: world.customers.ana,
      [world.orders.o1002]: world.customers.ben,
      [world.orders.o1003]: world.customers.ana,
      [world.orders.o1004]: world.customers.ana,
      [world.orders.o1005]: world.customers.ana,
      [world.orders.o2001]: world.customers.gil,
    };
    const conversations: { key: string; customer: string; id: string }[] = [];
    for (const agent of agents) {
      for (const customer of agent.customers) {
        conversations.push({
          key: agent.key,
          customer,
          id: await conversationFor(agent.key, { customer_id: customer }),
        });
      }
    }
    let compared = 0;
    await expectNoEffect(world, async () => {
      for (const { key, customer, id: conversation } of conversations) {
        for (const tool of TOOLS) {
          const missing = await propose(
            key,
            conversation,
            { name: tool, arguments: argumentsFor(tool, MISSING) },
            newCallKey(),
          );
          if (!(key === world.keys.agent2 && tool === "issue_refund"))
            expect(missing.json.code).toBe("order.not-found");
          for (const order of Object.keys(owner).filter((id) => owner[id] !== customer)) {
            const foreign = await propose(
              key,
              conversation,
              { name: tool, arguments: argumentsFor(tool, order) },
              newCallKey(),
            );
            expect(foreign.status).toBe(200);
            expect(withoutId(foreign.text), `${tool} on ${order} for ${customer}`).toBe(withoutId(missing.text));
            expect(headersBut(foreign.headers)).toEqual(headersBut(missing.headers));
            compared++;
          }
        }
      }
    });
    // ana does not own 2 of the 6 orders, ben and gil 5 each; two agents see ana and ben, one sees gil; 4 tools.
    expect(compared).toBe(2 * (2 + 5) * 4 + 5 * 4);
  });

  it("a conversation bound to one order cannot reach the customer's other orders", async () => {
    const bound = await agentConversation(world, "ana", { order_id: world.orders.o1001 });
    const open = await agentConversation(world);
    const otherOrder = await expectNoEffect(world, () =>
      propose(world.keys.agent, bound, { name: "get_order", arguments: { order_id: world.orders.o1004 } }),
    );
    const missing = await propose(world.keys.agent, open, { name: "get_order", arguments: { order_id: MISSING } });
    expect(withoutId(otherOrder.text)).toBe(withoutId(missing.text));
    const own = await propose(world.keys.agent, bound, {
      name: "get_order",
      arguments: { order_id: world.orders.o1001 },
    });
    expect(own.json.code).toBe("order.read");
  });

  it("owners can act: each agent reads its own customer's order", async () => {
    for (const [key, customer, order] of [
      [world.keys.agent, world.customers.ana, world.orders.o1001],
      [world.keys.agent2, world.customers.ben, world.orders.o1002],
      [world.keys.otherAgent, world.customers.gil, world.orders.o2001],
    ]) {
      const conversation = await conversationFor(key, { customer_id: customer });
      const read = await propose(key, conversation, { name: "get_order", arguments: { order_id: order } });
      expect(read.json).toMatchObject({ kind: "executed", code: "order.read", result: { order_id: order } });
    }
  });

  it("a conversation cannot be opened for another tenant's customer or another customer's order", async () => {
    const foreignCustomer = await openConversation(world.keys.agent, { customer_id: world.customers.gil });
    const missingCustomer = await openConversation(world.keys.agent, { customer_id: "cu_nobody" });
    expect(foreignCustomer.status).toBe(404);
    expect(foreignCustomer.text).toBe(missingCustomer.text);
    const foreignOrder = await openConversation(world.keys.agent, {
      customer_id: world.customers.ana,
      order_id: world.orders.o1002,
    });
    expect(foreignOrder.status).toBe(404);
  });

  it("identity fields in the conversation request are refused, not trusted", async () => {
    const forged = await openConversation(world.keys.agent, {
      customer_id: world.customers.ana,
      agent_id: world.users.agent2,
    });
    expect(forged.status).toBe(400);
    const widened = await openConversation(world.keys.agent2, {
      customer_id: world.customers.ana,
      scopes: ["refunds:write"],
    });
    expect(widened.status).toBe(400);
  });
});
