import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { propose } from "../support/api";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { expectNoEffect } from "../support/effects";
import { createWorld, type World } from "../support/world";

let world: World;
let conversation: string;
beforeAll(async () => {
  world = await createWorld({ maxAutoWrites: 100 });
  conversation = await agentConversation(world);
});

const address = (line1: string, postal_code: string) => ({
  name: "update_shipping_address",
  arguments: { order_id: world.orders.o1003, line1, postal_code },
});

describe("strings are normalized once (NFKC, trimmed) and the normalized form is what is used", () => {
  it("accepts full-width digits in a postal code and stores them as ASCII", async () => {
    const response = await proposeAsAgent(world, conversation, address("2 Elm St", "９４１１０"));
    expect(response.json).toMatchObject({
      kind: "executed",
      code: "address.updated",
      result: { postal_code: "94110" },
    });
    const order = await db.order.findUniqueOrThrow({ where: { id: world.orders.o1003 } });
    expect(order.postalCode).toBe("94110");
  });

  it("trims a trailing newline", async () => {
    const response = await proposeAsAgent(world, conversation, address("3 Elm St\n", "94107"));
    expect(response.json.code).toBe("address.updated");
    const order = await db.order.findUniqueOrThrow({ where: { id: world.orders.o1003 } });
    expect(order.addressLine1).toBe("3 Elm St");
    const change = await db.addressChange.findFirstOrThrow({ where: { toolCallId: response.json.id } });
    expect(change.toLine1).toBe("3 Elm St");
  });

  it("rejects an embedded newline and other control or separator characters", async () => {
    for (const line1 of ["4 Elm\nSt", "4 Elm\u2028St", "4 Elm\u202eSt"]) {
      const response = await expectNoEffect(world, () => proposeAsAgent(world, conversation, address(line1, "94107")));
      expect(response.json).toMatchObject({
        kind: "rejected",
        stage: "schema",
        code: "schema.invalid",
        model: { paths: ["line1"] },
      });
    }
    // A NUL (like an unpaired surrogate) cannot be stored by PostgreSQL at all, so parsing refuses it first.
    for (const line1 of ["4 Elm\u0000St", "4 Elm\ud800St"]) {
      const response = await expectNoEffect(world, () => proposeAsAgent(world, conversation, address(line1, "94107")));
      expect(response.json).toMatchObject({ kind: "rejected", stage: "parse", code: "parse.malformed" });
    }
  });

  it("normalizes before matching formats: a full-width currency code is USD", async () => {
    const response = await proposeAsAgent(world, conversation, refund(world.orders.o1001, 100, { currency: "ＵＳＤ" }));
    expect(response.json).toMatchObject({ code: "refund.issued", result: { currency: "USD" } });
  });
});

describe("strict types: no coercion", () => {
  for (const [label, value] of [
    ["true as an amount", true],
    ["a float amount", 40.5],
    ["a numeric string amount", "4000"],
    ["null as an amount", null],
    ["an array amount", [4000]],
  ] as const) {
    it(`rejects ${label}`, async () => {
      const response = await expectNoEffect(world, () =>
        proposeAsAgent(world, conversation, refund(world.orders.o1001, value)),
      );
      expect(response.json).toMatchObject({
        kind: "rejected",
        stage: "schema",
        code: "schema.invalid",
        model: { paths: ["amount_cents"] },
      });
    });
  }

  it("rejects a numeric enum value", async () => {
    const response = await expectNoEffect(world, () =>
      proposeAsAgent(world, conversation, refund(world.orders.o1001, 100, { reason: 0 })),
    );
    expect(response.json).toMatchObject({ stage: "schema", code: "schema.invalid", model: { paths: ["reason"] } });
  });

  it("rejects a number where the order id string belongs", async () => {
    const response = await expectNoEffect(world, () =>
      propose(world.keys.agent, conversation, { name: "get_order", arguments: { order_id: 1001 } }),
    );
    expect(response.json).toMatchObject({ code: "schema.invalid", model: { paths: ["order_id"] } });
  });

  it("a prototype-pollution key is just an unknown field", async () => {
    const body = `{"name":"get_order","arguments":{"order_id":"${world.orders.o1001}","__proto__":{"admin":true}}}`;
    const response = await expectNoEffect(world, () => propose(world.keys.agent, conversation, body));
    expect(response.json).toMatchObject({ code: "schema.invalid", model: { paths: ["__proto__"] } });
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});
