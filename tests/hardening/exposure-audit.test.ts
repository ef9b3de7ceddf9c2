import { describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { openOver, proposeOver } from "../support/api-over-http";
import { personCookie } from "../support/app-instances";
import { refund } from "../support/calls";
import { ownProvider } from "../support/externals";
import { expectRefundInvariants } from "../support/invariants";
import { inTurn, ownInstances } from "../support/own-instances";
import { createWorld, moreOrders } from "../support/world";

// Exposure ceilings and the decision-log export against two `next start` instances of the build sharing one
// PostgreSQL. Ports are handed out free.

const provider = ownProvider();
const instances = ownInstances(2, () => provider.env());

describe("exposure ceilings on two instances", () => {
  it("100 parallel refunds across 50 conversations, spread over both instances, stop at the tenant ceiling exactly", async () => {
    const world = await createWorld({
      rateKeyPerMin: 10_000,
      agentDailyCeilingCents: 12_000,
      tenantDailyCeilingCents: 15_000,
    });
    await db.user.update({ where: { id: world.users.agent2 }, data: { canRefund: true } });
    const keyOf = (index: number) => (index % 4 < 2 ? world.keys.agent : world.keys.agent2);
    const orders = await moreOrders(world, 100);
    const conversations = await Promise.all(
      Array.from(
        { length: 50 },
        async (_, index) => (await openOver(inTurn(instances, index), keyOf(index), world.customers.ana)).json.id!,
      ),
    );
    const responses = await Promise.all(
      orders.map((order, index) =>
        proposeOver(
          inTurn(instances, index),
          keyOf(index % 50),
          conversations[index % 50],
          refund(order, 500),
          `k-${index}`,
        ),
      ),
    );
    const codes = responses.map((response) => response.json.code);
    expect(codes.filter((code) => code !== "refund.issued" && code !== "approval.required")).toEqual([]);
    expect(codes.filter((code) => code === "refund.issued")).toHaveLength(30);
    expect(
      responses
        .filter((response) => response.json.code === "approval.required")
        .every((response) => response.json.approval?.preview.ceiling),
    ).toBe(true);
    const exposure = await db.autoExposure.aggregate({
      where: { tenantId: world.tenantId },
      _sum: { amountCents: true },
    });
    expect(exposure._sum.amountCents).toBe(15_000);
    const stats = (await (await fetch(`${provider.url}/_stats`)).json()) as { totalsByOrder: Record<string, number> };
    await expectRefundInvariants(orders, stats.totalsByOrder);
  });

  it("opening conversations past the per-key limit answers 429 with Retry-After on either instance, and opens nothing", async () => {
    const world = await createWorld({ rateOpenPerMin: 4 });
    const answers = [];
    for (let index = 0; index < 6; index++)
      answers.push(await openOver(inTurn(instances, index), world.keys.agent, world.customers.ana));
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 429, 429]);
    expect(answers[4].json.error?.code).toBe("rate.limited");
    expect(Number(answers[4].retryAfter)).toBeGreaterThanOrEqual(1);
    expect(await db.conversation.count({ where: { agentId: world.users.agent } })).toBe(4);
  });
});

describe("the decision-log export route behind the session", () => {
  it("gives a supervisor the tenant's rows as CSV and JSON Lines; refuses an agent, another tenant and no session", async () => {
    const world = await createWorld();
    const conversation = (await openOver(inTurn(instances, 0), world.keys.agent, world.customers.ana)).json.id!;
    await proposeOver(
      inTurn(instances, 0),
      world.keys.agent,
      conversation,
      refund(world.orders.o1001, 1000),
      "export-1",
    );
    await proposeOver(
      inTurn(instances, 1),
      world.keys.agent,
      conversation,
      refund(world.orders.o1004, 9000),
      "export-2",
    );
    const rows = await db.decisionLog.count({ where: { tenantId: world.tenantId } });
    const cookie = (who: "supervisor" | "agent" | "otherSupervisor", role: "SUPERVISOR" | "AGENT") =>
      personCookie(world.users[who], role);
    const day = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 24 * 3600_000).toISOString().slice(0, 10);
    const url = (format: string) =>
      `${inTurn(instances, 1)}/api/tenants/${world.tenantId}/decision-log?from=${day}&to=${tomorrow}&format=${format}`;

    const csv = await fetch(url("csv"), { headers: { cookie: await cookie("supervisor", "SUPERVISOR") } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toBe(
      `attachment; filename="decision-log-${world.tenantId}-${day}-${tomorrow}.csv"`,
    );
    const lines = (await csv.text()).trimEnd().split("\r\n");
    expect(lines[0]).toMatch(/^id,created_at,/);
    expect(lines).toHaveLength(rows + 1);
    const jsonl = await fetch(url("jsonl"), { headers: { cookie: await cookie("supervisor", "SUPERVISOR") } });
    expect(
      (await jsonl.text())
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line).code),
    ).toContain("approval.required");

    const agent = await fetch(url("csv"), { headers: { cookie: await cookie("agent", "AGENT") } });
    expect([agent.status, ((await agent.json()) as { error: { code: string } }).error.code]).toEqual([
      403,
      "auth.forbidden",
    ]);
    const other = await fetch(url("csv"), { headers: { cookie: await cookie("otherSupervisor", "SUPERVISOR") } });
    expect([other.status, ((await other.json()) as { error: { code: string } }).error.code]).toEqual([
      404,
      "not-found",
    ]);
    expect((await fetch(url("csv"))).status).toBe(401);
  });
});
