import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { migrate } from "@/lib/db/migrate";
import { startCluster, type Cluster } from "@/scripts/pg-cluster";

// This file runs in its own worker with its own PostgreSQL, which it stops mid-test: a real outage.
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
  await migrate(cluster.url);
  process.env.DATABASE_URL = cluster.url;
}, 60_000);
afterAll(() => cluster.stop());

describe("database down", () => {
  it("answers unavailable / host.error without a stack trace or a 500, and logs the detail", async () => {
    const { createWorld } = await import("../support/world");
    const { conversationFor, propose } = await import("../support/api");
    const world = await createWorld();
    const conversation = await conversationFor(world.keys.agent, { customer_id: world.customers.ana });
    cluster.stop();
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const response = await propose(world.keys.agent, conversation, {
        name: "get_order",
        arguments: { order_id: world.orders.o1001 },
      });
      expect(response.status).not.toBe(500);
      expect(response.status).toBe(503);
      expect(response.json).toMatchObject({ error: { code: "host.error" } });
      expect(response.text).not.toMatch(/ECONNREFUSED|at .*\.(ts|js)|stack/i);
      expect(errors).toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
  });
});
