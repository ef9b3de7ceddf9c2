import { describe, expect, it } from "vitest";
import { searchCustomers } from "@/lib/conversations/console";
import { createWorld } from "../support/world";

// The console's customer picker (what its search box calls): LIKE's wildcards in what a person types are text.

describe("the customer picker's search", () => {
  it("finds by a part of the email or the exact id, and reads % and _ as the characters they are", async () => {
    const world = await createWorld();
    const emails = async (query: string) => (await searchCustomers(world.tenantId, query)).map((one) => one.email);
    const all = await emails("");
    expect(all.length).toBeGreaterThan(1);
    const ana = all.find((email) => email.startsWith("ana"))!;
    expect(await emails("ANA")).toEqual([ana]);
    expect(await emails(ana.slice(2, 6))).toContain(ana);
    expect(await emails(world.customers.ana)).toEqual([ana]);
    for (const wildcard of ["%", "_", "a%a", "\\"]) expect(await emails(wildcard), wildcard).toEqual([]);
  });
});
