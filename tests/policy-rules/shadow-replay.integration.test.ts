import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { replayRules, shadowDifferences } from "@/lib/admin/rules/replay";
import { db } from "@/lib/db";
import { conversationFor, newCallKey, propose } from "../support/api";
import { createWorld } from "../support/world";
import { EXAMPLE_RULES } from "./examples";
import { ageWorld, daysAgo, putRules, refund } from "./support";

describe("shadow rules and replay over recorded decisions", () => {
  it("a shadow set is recorded beside the live one, never enforced; replay over the same calls reports the same", async () => {
    const world = await createWorld();
    await ageWorld(world);
    await putRules(world, EXAMPLE_RULES, "shadow");
    await db.order.update({ where: { id: world.orders.o1004 }, data: { placedAt: daysAgo(120) } });
    const ana = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    const ben = await conversationFor(world.keys.agent, { customer_id: world.customers.ben });

    const old = await propose(world.keys.agent, ana, refund(world.orders.o1004, 2000), newCallKey());
    const recent = await propose(world.keys.agent, ana, refund(world.orders.o1001, 1000), newCallKey());
    const read = await propose(world.keys.agent, ana, {
      name: "get_order",
      arguments: { order_id: world.orders.o1004 },
    });
    await db.customer.update({ where: { id: world.customers.ben }, data: { fraudWatch: true } });
    const watched = await propose(world.keys.agent, ben, refund(world.orders.o1002, 1500), newCallKey());
    const large = await propose(world.keys.agent, ben, refund(world.orders.o1002, 9000), newCallKey());
    // Never enforced: the live decision is the numbers' alone.
    expect([old, recent, read, watched, large].map((call) => call.json.code)).toEqual([
      "refund.issued",
      "refund.issued",
      "order.read",
      "refund.issued",
      "approval.required",
    ]);

    const shadow = (await shadowDifferences(world.tenantId))!;
    expect(shadow.decisions).toBe(5);
    expect(
      shadow.differences.map(({ callId, was, would, rules, amountCents, currency }) => [
        callId,
        was,
        would,
        rules,
        amountCents,
        currency,
      ]),
    ).toEqual([
      [large.json.id, "hold", "deny", ["fraud-watch"], 9000, "USD"],
      [watched.json.id, "allow", "deny", ["fraud-watch"], 1500, "USD"],
      [old.json.id, "allow", "hold", ["old-orders-wait"], 2000, "USD"],
    ]);
    expect(shadow.byRule).toEqual([
      { rule: "fraud-watch", calls: 2, cents: { USD: 10500 } },
      { rule: "old-orders-wait", calls: 1, cents: { USD: 2000 } },
    ]);

    const replayed = await replayRules(world.tenantId, EXAMPLE_RULES, 7);
    expect(replayed).toEqual({ ok: true, report: shadow });

    // The same replay from the command line.
    const file = path.join(mkdtempSync(path.join(tmpdir(), "rules-")), "rules.cedar");
    writeFileSync(file, EXAMPLE_RULES);
    const run = spawnSync(
      process.execPath,
      [
        path.join("node_modules", "tsx", "dist", "cli.mjs"),
        "--conditions=react-server",
        "scripts/policy-replay.ts",
        "--tenant",
        world.tenantId,
        "--rules",
        file,
      ],
      { encoding: "utf8", env: process.env },
    );
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("3 calls of the 5 recorded in the last 7 days would be decided differently.");
    expect(run.stdout).toContain("fraud-watch: 2 calls, 105.00 USD");
  });

  it("replay refuses a candidate that does not validate, in words", async () => {
    const world = await createWorld();
    expect(await replayRules(world.tenantId, '@id("a") @hold("b") permit (principal, action, resource);', 7)).toEqual({
      ok: false,
      errors: [expect.stringMatching(/only `forbid` rules/)],
    });
  });
});
