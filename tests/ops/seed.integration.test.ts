import { verifyPassword } from "@/lib/auth/password-hash";
import { describe, expect, it } from "vitest";
import { authenticateApiKey } from "@/lib/auth/keys/api-keys";
import { db } from "@/lib/db";
import { DEMO_PASSWORD, seed } from "@/scripts/dev/seed-data";

const counts = async () => ({
  tenants: await db.tenant.count({ where: { id: { in: ["acme", "globex"] } } }),
  users: await db.user.count({ where: { tenantId: { in: ["acme", "globex"] } } }),
  customers: await db.customer.count({ where: { tenantId: { in: ["acme", "globex"] } } }),
  orders: await db.order.count({ where: { tenantId: { in: ["acme", "globex"] } } }),
  keys: await db.apiKey.count({ where: { tenantId: { in: ["acme", "globex"] }, revokedAt: null } }),
});

describe("db:seed", () => {
  it("creates exactly the SPEC's demo data, idempotently", async () => {
    const first = await seed(db);
    expect(await counts()).toEqual({ tenants: 2, users: 6, customers: 3, orders: 6, keys: 3 });

    const users = await db.user.findMany({
      orderBy: { email: "asc" },
      where: { tenantId: { in: ["acme", "globex"] } },
    });
    expect(users.map((user) => [user.email, user.tenantId, user.role, user.canRefund])).toEqual([
      ["admin@acme.test", "acme", "ADMIN", false],
      ["agent2@acme.test", "acme", "AGENT", false],
      ["agent@acme.test", "acme", "AGENT", true],
      ["agent@globex.test", "globex", "AGENT", true],
      ["supervisor@acme.test", "acme", "SUPERVISOR", false],
      ["supervisor@globex.test", "globex", "SUPERVISOR", false],
    ]);
    expect(users[0].passwordHash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(DEMO_PASSWORD, users[0].passwordHash)).toEqual({ matches: true, needsUpgrade: false });

    const orders = await db.order.findMany({ orderBy: { id: "asc" }, where: { tenantId: { in: ["acme", "globex"] } } });
    expect(
      orders.map((o) => [
        o.id,
        o.tenantId,
        o.customerId,
        o.totalCents,
        o.currency,
        o.status,
        o.refundedCents,
        o.fraudHold,
        `${o.addressLine1}, ${o.postalCode}`,
      ]),
    ).toEqual([
      ["ord_1001", "acme", "cu_ana", 4200, "USD", "delivered", 0, false, "1 Elm St, 94107"],
      ["ord_1002", "acme", "cu_ben", 15900, "USD", "delivered", 0, false, "9 Oak Ave, 10001"],
      ["ord_1003", "acme", "cu_ana", 12000, "USD", "processing", 0, false, "1 Elm St, 94107"],
      ["ord_1004", "acme", "cu_ana", 15000, "USD", "delivered", 0, false, "1 Elm St, 94107"],
      ["ord_1005", "acme", "cu_ana", 8000, "USD", "delivered", 0, true, "1 Elm St, 94107"],
      ["ord_2001", "globex", "cu_gil", 9000, "USD", "delivered", 0, false, "5 Pine Rd, 60601"],
    ]);
    const customers = await db.customer.findMany({
      orderBy: { id: "asc" },
      where: { tenantId: { in: ["acme", "globex"] } },
    });
    expect(customers.map((c) => [c.id, c.tenantId, c.email])).toEqual([
      ["cu_ana", "acme", "ana@example.test"],
      ["cu_ben", "acme", "ben@example.test"],
      ["cu_gil", "globex", "gil@example.test"],
    ]);
    const tenant = await db.tenant.findUniqueOrThrow({ where: { id: "acme" } });
    expect(tenant).toMatchObject({
      autoLimitCents: 5000,
      sessionCapCents: 10000,
      maxAutoWrites: 3,
      approvalTtlSeconds: 900,
    });

    expect(Object.keys(first.keys).sort()).toEqual(["agent2@acme.test", "agent@acme.test", "agent@globex.test"]);
    expect(await authenticateApiKey(`Bearer ${first.keys["agent@acme.test"]}`)).toMatchObject({
      tenantId: "acme",
      userId: "usr_acme_agent",
    });

    const second = await seed(db, first.keys);
    expect(second.keys).toEqual(first.keys);
    expect(second.created.keys).toEqual([]);
    expect(await counts()).toEqual({ tenants: 2, users: 6, customers: 3, orders: 6, keys: 3 });
  });
});
