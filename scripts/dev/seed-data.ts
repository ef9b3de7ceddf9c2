import { createApiKey } from "../../lib/auth/keys/api-keys";
import { sha256Hex } from "../../lib/canonical";
import type { Client } from "../../lib/db";
import { hashPassword } from "../../lib/auth/password-hash";
import type { Role } from "../../lib/generated/prisma/client";

/** Development only: printed by the seed and documented in the README. */
export const DEMO_PASSWORD = "toolgate-demo";

interface SeedUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  canRefund: boolean;
}

interface SeedTenant {
  id: string;
  name: string;
  users: SeedUser[];
  customers: { id: string; email: string }[];
  orders: {
    id: string;
    customerId: string;
    totalCents: number;
    status: string;
    addressLine1: string;
    postalCode: string;
    fraudHold?: boolean;
  }[];
}

export const SEED: SeedTenant[] = [
  {
    id: "acme",
    name: "Acme",
    users: [
      { id: "usr_acme_agent", email: "agent@acme.test", name: "Ada Agent", role: "AGENT", canRefund: true },
      {
        id: "usr_acme_agent2",
        email: "agent2@acme.test",
        name: "Abe Agent",
        role: "AGENT",
        canRefund: false,
      },
      {
        id: "usr_acme_supervisor",
        email: "supervisor@acme.test",
        name: "Sue Supervisor",
        role: "SUPERVISOR",
        canRefund: false,
      },
      { id: "usr_acme_admin", email: "admin@acme.test", name: "Al Admin", role: "ADMIN", canRefund: false },
    ],
    customers: [
      { id: "cu_ana", email: "ana@example.test" },
      { id: "cu_ben", email: "ben@example.test" },
    ],
    orders: [
      {
        id: "ord_1001",
        customerId: "cu_ana",
        totalCents: 4200,
        status: "delivered",
        addressLine1: "1 Elm St",
        postalCode: "94107",
      },
      {
        id: "ord_1002",
        customerId: "cu_ben",
        totalCents: 15900,
        status: "delivered",
        addressLine1: "9 Oak Ave",
        postalCode: "10001",
      },
      {
        id: "ord_1003",
        customerId: "cu_ana",
        totalCents: 12000,
        status: "processing",
        addressLine1: "1 Elm St",
        postalCode: "94107",
      },
      {
        id: "ord_1004",
        customerId: "cu_ana",
        totalCents: 15000,
        status: "delivered",
        addressLine1: "1 Elm St",
        postalCode: "94107",
      },
      {
        id: "ord_1005",
        customerId: "cu_ana",
        totalCents: 8000,
        status: "delivered",
        addressLine1: "1 Elm St",
        postalCode: "94107",
        fraudHold: true,
      },
    ],
  },
  {
    id: "globex",
    name: "Globex",
    users: [
      { id: "usr_globex_agent", email: "agent@globex.test", name: "Gia Agent", role: "AGENT", canRefund: true },
      {
        id: "usr_globex_supervisor",
        email: "supervisor@globex.test",
        name: "Gus Supervisor",
        role: "SUPERVISOR",
        canRefund: false,
      },
    ],
    customers: [{ id: "cu_gil", email: "gil@example.test" }],
    orders: [
      {
        id: "ord_2001",
        customerId: "cu_gil",
        totalCents: 9000,
        status: "delivered",
        addressLine1: "5 Pine Rd",
        postalCode: "60601",
      },
    ],
  },
];

export interface SeedResult {
  /** email -> API key, for every seeded agent. */
  keys: Record<string, string>;
  created: { keys: string[] };
}

/**
 * Creates what is missing and leaves existing rows alone, so a second run changes nothing and a demo in
 * progress keeps its refunds. Agent keys in `knownKeys` that still work are kept; others are replaced.
 */
export async function seed(client: Client, knownKeys: Record<string, string> = {}): Promise<SeedResult> {
  const passwordHash = await hashPassword(DEMO_PASSWORD);
  const result: SeedResult = { keys: {}, created: { keys: [] } };
  for (const tenant of SEED) {
    await client.tenant.upsert({ where: { id: tenant.id }, create: { id: tenant.id, name: tenant.name }, update: {} });
    for (const user of tenant.users) {
      await client.user.upsert({
        where: { email: user.email },
        create: { ...user, tenantId: tenant.id, passwordHash },
        update: {},
      });
    }
    for (const customer of tenant.customers) {
      await client.customer.upsert({
        where: { id: customer.id },
        create: { ...customer, tenantId: tenant.id },
        update: {},
      });
    }
    for (const order of tenant.orders) {
      await client.order.upsert({
        where: { id: order.id },
        create: { ...order, tenantId: tenant.id, currency: "USD", fraudHold: order.fraudHold ?? false },
        update: {},
      });
    }
    for (const user of tenant.users.filter((candidate) => candidate.role === "AGENT")) {
      const known = knownKeys[user.email];
      const stillValid =
        known !== undefined &&
        (await client.apiKey.count({ where: { hash: sha256Hex(known), userId: user.id, revokedAt: null } })) === 1;
      if (stillValid) {
        result.keys[user.email] = known;
        continue;
      }
      const created = await createApiKey(client, { id: user.id, tenantId: tenant.id });
      result.keys[user.email] = created.key;
      result.created.keys.push(user.email);
    }
  }
  return result;
}
