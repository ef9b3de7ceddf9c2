import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { callFactsStatement } from "@/lib/gateway/context/sql";
import { createWorld, moreOrders, type World } from "../support/world";

// A call reads its order by id, then checks that the order is its tenant's and customer's. Left to choose, the planner
// may take the (tenant, customer) index and read every order of the customer to find one (docs/BENCHMARKS.md): a
// customer with thousands of orders would make every call about them slower. The order is found by its key.

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

let world: World;
let order: string;
beforeAll(async () => {
  world = await createWorld();
  [order] = await moreOrders(world, 2_000);
}, 60_000);

describe("a call's order", () => {
  it("is read by its key however many orders its customer has", async () => {
    const statement = callFactsStatement({
      orderId: order,
      tenantId: world.tenantId,
      customerId: world.customers.ana,
      agentId: world.users.agent,
      key: null,
      recent: null,
      rules: null,
    });
    const [row] = await db.$queryRaw<{ "QUERY PLAN": { Plan: PlanNode }[] }[]>(
      Prisma.sql`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`,
    );
    const scans = nodes(row["QUERY PLAN"][0].Plan).filter((node) => node["Relation Name"] === "Order");
    expect(scans).toHaveLength(1);
    expect(scans[0]).toMatchObject({ "Index Name": "Order_pkey", "Actual Rows": 1 });
  });
});
