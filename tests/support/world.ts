import { randomBytes, randomInt } from "node:crypto";
import { createApiKey } from "@/lib/auth/keys/api-keys";
import { hashPassword } from "@/lib/auth/password-hash";
import { db } from "@/lib/db";
import { newId } from "@/lib/ids";
import type { TenantPolicy } from "@/lib/gateway/types";

// Each test builds its own tenants shaped like the SPEC seed, with fresh ids, so files can run in parallel
// on one database without touching each other's rows.

interface OrderRow {
  tenantId: string;
  customerId: string;
  totalCents: number;
  status: string;
  currency: string;
  addressLine1: string;
  postalCode: string;
  fraudHold?: boolean;
}

/**
 * Inserts `rows` as orders with consecutive ids from `first(attempt)`, in one statement. Every test process on the
 * database draws from the same eight digits an order id may have, so two can meet: a clash inserts nothing and is
 * tried again from another start.
 */
async function insertOrders(rows: OrderRow[], first: (attempt: number) => number): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    const start = first(attempt);
    const ids = rows.map((_, index) => `ord_${start + index}`);
    try {
      await db.order.createMany({ data: rows.map((row, index) => ({ ...row, id: ids[index] })) });
      return ids;
    } catch (error) {
      if (attempt === 5 || (error as { code?: string }).code !== "P2002") throw error;
    }
  }
}

// createWorld's orders run on from a random start per process, and from a new one after a clash.
let nextOrder = randomInt(10_000_000, 90_000_000);
function worldOrders(count: number) {
  return (attempt: number) => {
    if (attempt > 1) nextOrder = randomInt(10_000_000, 90_000_000);
    const start = nextOrder;
    nextOrder += count;
    return start;
  };
}

export interface World {
  tenantId: string;
  otherTenantId: string;
  users: {
    agent: string;
    agent2: string;
    supervisor: string;
    admin: string;
    otherAgent: string;
    otherSupervisor: string;
  };
  keys: { agent: string; agent2: string; otherAgent: string };
  customers: { ana: string; ben: string; gil: string };
  orders: { o1001: string; o1002: string; o1003: string; o1004: string; o1005: string; o2001: string };
}

/** The tenant's policy numbers a test may set; the rest keep their defaults. */
export type WorldPolicy = Partial<
  TenantPolicy & { agentDailyCeilingCents: number; tenantDailyCeilingCents: number; rateOpenPerMin: number }
>;

/** Ceilings no test reaches unless it is about them. */
export const NO_CEILINGS = {
  agentDailyCeilingCents: 2_000_000_000,
  tenantDailyCeilingCents: 2_000_000_000,
  rateOpenPerMin: 100_000,
} as const;

/**
 * A duplicate-intent guard that looks nowhere back (a window of 0 hours, below what an admin can set), for tests of
 * the other limits that refund one order again and again; tests/gateway/duplicate-intent.integration.test.ts is about it.
 */
export const NO_DUPLICATE_GUARD = { duplicateWindowHours: 0 } as const;

export async function createWorld(policy: WorldPolicy = {}): Promise<World> {
  const suffix = randomBytes(5).toString("hex");
  const tenantId = `t_${suffix}`;
  const otherTenantId = `u_${suffix}`;
  const user = (name: string) => `usr_${name}_${suffix}`;
  const users = {
    agent: user("agent"),
    agent2: user("agent2"),
    supervisor: user("supervisor"),
    admin: user("admin"),
    otherAgent: user("oagent"),
    otherSupervisor: user("osupervisor"),
  };
  const customers = { ana: `cu_ana_${suffix}`, ben: `cu_ben_${suffix}`, gil: `cu_gil_${suffix}` };
  const passwordHash = "not-used-in-api-tests";

  // Test files open a conversation per case: only the tests of the opening limit meet it.
  const numbers = { rateOpenPerMin: 1000, ...policy };
  await db.tenant.create({ data: { id: tenantId, name: `Acme ${suffix}`, ...numbers } });
  await db.tenant.create({ data: { id: otherTenantId, name: `Globex ${suffix}`, ...numbers } });
  await db.user.createMany({
    data: [
      {
        id: users.agent,
        tenantId,
        email: `agent-${suffix}@acme.test`,
        name: "Agent",
        role: "AGENT",
        canRefund: true,
        passwordHash,
      },
      {
        id: users.agent2,
        tenantId,
        email: `agent2-${suffix}@acme.test`,
        name: "Agent 2",
        role: "AGENT",
        canRefund: false,
        passwordHash,
      },
      {
        id: users.supervisor,
        tenantId,
        email: `supervisor-${suffix}@acme.test`,
        name: "Supervisor",
        role: "SUPERVISOR",
        passwordHash,
      },
      { id: users.admin, tenantId, email: `admin-${suffix}@acme.test`, name: "Admin", role: "ADMIN", passwordHash },
      {
        id: users.otherAgent,
        tenantId: otherTenantId,
        email: `agent-${suffix}@globex.test`,
        name: "G Agent",
        role: "AGENT",
        canRefund: true,
        passwordHash,
      },
      {
        id: users.otherSupervisor,
        tenantId: otherTenantId,
        email: `supervisor-${suffix}@globex.test`,
        name: "G Supervisor",
        role: "SUPERVISOR",
        passwordHash,
      },
    ],
  });
  await db.customer.createMany({
    data: [
      { id: customers.ana, tenantId, email: `ana-${suffix}@example.test` },
      { id: customers.ben, tenantId, email: `ben-${suffix}@example.test` },
      { id: customers.gil, tenantId: otherTenantId, email: `gil-${suffix}@example.test` },
    ],
  });
  const address = { addressLine1: "1 Elm St", postalCode: "94107", currency: "USD" };
  const orderRows: OrderRow[] = [
    { tenantId, customerId: customers.ana, totalCents: 4200, status: "delivered", ...address },
    {
      tenantId,
      customerId: customers.ben,
      totalCents: 15900,
      status: "delivered",
      ...address,
      addressLine1: "9 Oak Ave",
      postalCode: "10001",
    },
    { tenantId, customerId: customers.ana, totalCents: 12000, status: "processing", ...address },
    { tenantId, customerId: customers.ana, totalCents: 15000, status: "delivered", ...address },
    {
      tenantId,
      customerId: customers.ana,
      totalCents: 8000,
      status: "delivered",
      fraudHold: true,
      ...address,
    },
    {
      tenantId: otherTenantId,
      customerId: customers.gil,
      totalCents: 9000,
      status: "delivered",
      ...address,
      addressLine1: "5 Pine Rd",
      postalCode: "60601",
    },
  ];
  const [o1001, o1002, o1003, o1004, o1005, o2001] = await insertOrders(orderRows, worldOrders(orderRows.length));
  const orders = { o1001, o1002, o1003, o1004, o1005, o2001 };
  const keys = {
    agent: (await createApiKey(db, { id: users.agent, tenantId })).key,
    agent2: (await createApiKey(db, { id: users.agent2, tenantId })).key,
    otherAgent: (await createApiKey(db, { id: users.otherAgent, tenantId: otherTenantId })).key,
  };
  return { tenantId, otherTenantId, users, keys, customers, orders };
}

/** Every effect store of both tenants: compare before and after a call that must not have acted. */
export async function effectSnapshot(world: World) {
  const tenants = [world.tenantId, world.otherTenantId];
  const [orders, refunds, addressChanges, outbox, conversations] = await Promise.all([
    db.order.findMany({ where: { tenantId: { in: tenants } }, orderBy: { id: "asc" } }),
    db.refund.findMany({ where: { tenantId: { in: tenants } }, orderBy: { id: "asc" } }),
    db.addressChange.findMany({ where: { order: { tenantId: { in: tenants } } }, orderBy: { id: "asc" } }),
    // Messages a tool sends; the approval stage's own notifications to supervisors are checked where they belong.
    db.outboxMessage.findMany({ where: { tenantId: { in: tenants }, kind: "status_email" }, orderBy: { id: "asc" } }),
    db.conversation.findMany({
      where: { tenantId: { in: tenants } },
      select: { id: true, writesMade: true, irreversibleCents: true },
      orderBy: { id: "asc" },
    }),
  ]);
  return { orders, refunds, addressChanges, outbox, conversations };
}

/**
 * `count` more delivered orders of ana's, each of `totalCents`, for tests that need many; their ids run on from
 * `first`, by default drawn above the numbers createWorld takes its orders from.
 */
export async function moreOrders(
  world: World,
  count: number,
  totalCents = 10_000,
  first = randomInt(90_000_000, 99_999_000),
): Promise<string[]> {
  const row = {
    tenantId: world.tenantId,
    customerId: world.customers.ana,
    totalCents,
    status: "delivered",
    currency: "USD",
    addressLine1: "1 Elm St",
    postalCode: "94107",
  };
  return insertOrders(Array(count).fill(row), (attempt) => (attempt === 1 ? first : randomInt(90_000_000, 99_999_000)));
}

/** A conversation of the world's agent with ana, offering `tools` under `scopes`; returns its id. */
export async function anaConversation(world: World, tools: string[], scopes: string[], id = newId("conv")) {
  const conversation = await db.conversation.create({
    data: { id, tenantId: world.tenantId, agentId: world.users.agent, customerId: world.customers.ana, tools, scopes },
    select: { id: true },
  });
  return conversation.id;
}

/** The address a user of a world made by `createSignInWorld` signs in with, readable from the user's id. */
export const signInEmail = (user: string) => `${user.replace(/^usr_(\w+)_(\w+)$/, "$1-$2")}@acme.test`;

/** A world whose every user signs in with `password` at `signInEmail(id)`. */
export async function createSignInWorld(password: string, policy: WorldPolicy = {}): Promise<World> {
  const world = await createWorld(policy);
  const passwordHash = await hashPassword(password);
  for (const id of Object.values(world.users))
    await db.user.update({ where: { id }, data: { passwordHash, email: signInEmail(id) }, select: { id: true } });
  return world;
}

/** One more person of the world's first tenant (a second supervisor or admin), with no password that works. */
export async function addPerson(world: World, id: string, role: "SUPERVISOR" | "ADMIN", name: string): Promise<string> {
  await db.user.create({
    data: { id, tenantId: world.tenantId, email: `${id}@acme.test`, name, role, passwordHash: "unused" },
  });
  return id;
}
