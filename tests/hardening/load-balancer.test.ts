import bcrypt from "bcryptjs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { db } from "@/lib/db";
import { migrate } from "@/lib/db/migrate";
import { httpPaymentProvider } from "@/lib/payments/provider/provider";
import { reconcileRefunds } from "@/lib/payments/reconcile/reconcile";
import { signInOver } from "../support/api-over-http";
import { callAction, personCookie } from "../support/app-instances";
import { freePort, freshDatabase } from "../../scripts/pg-cluster";
import { refund } from "../support/calls";
import { ownProvider } from "../support/externals";
import { startHaproxy, type Balancer } from "../support/haproxy";
import { expectRefundInvariants } from "../support/invariants";
import { ownInstances } from "../support/own-instances";
import { createWorld, type World } from "../support/world";

// Three `next start` instances behind HAProxy, one PostgreSQL. A mixed load (refunds that execute, refunds held
// for approval, reads) goes through the balancer while supervisors decide approvals, and one instance is
// SIGKILLed in the middle. An agent runtime retries a call that got no answer with the same call key, as the
// SPEC asks. Afterwards: no effect happened twice, every call ended in one final outcome (after
// reconciliation), the provider's total equals the books, and no log line of any instance holds a key or a password.

const BALANCER_PORT = await freePort();
const STATS_PORT = await freePort();
const PASSWORD = "lb-test-password-5813";

let balancer: Balancer;

beforeAll(async () => {
  // A database of its own: the instances' reconciliation job settles every unsettled refund it finds, and other
  // files' leftovers were made with other providers.
  const url = await freshDatabase(inject("databaseUrl"), "toolgate_load_balancer");
  await migrate(url);
  process.env.DATABASE_URL = url;
});
const provider = ownProvider();
const instances = ownInstances(3, () => ({
  ...provider.env(),
  TOOLGATE_JOBS: "on",
  RECONCILE_INTERVAL_MS: "1000",
  EXPIRY_INTERVAL_MS: "1000",
}));
beforeAll(async () => {
  // The first request of each route loads its code; done here, not in the balancer's first health checks.
  for (const instance of instances)
    for (const route of ["/api/ready", "/api/auth/csrf", "/api/health"]) await fetch(`${instance.url}${route}`);
  const ports = instances.map((instance) => Number(new URL(instance.url).port));
  balancer = await startHaproxy(BALANCER_PORT, STATS_PORT, ports);
});

afterAll(async () => {
  await balancer?.stop();
});

interface Answer {
  status: number;
  body: { id: string; kind: string; code: string; replayed?: boolean };
  attempts: number;
  failures: string[];
}

/** One logical call, retried with the same call key while it gets no answer or a 502/503/504. */
async function proposeUntilAnswered(
  world: World,
  conversation: string,
  body: unknown,
  callKey: string,
): Promise<Answer> {
  const failures: string[] = [];
  for (let attempt = 1; attempt <= 10; attempt++) {
    try {
      const response = await fetch(`${balancer.url}/api/v1/conversations/${conversation}/tool-calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${world.keys.agent}`, "idempotency-key": callKey },
        body: JSON.stringify(body),
      });
      if (![502, 503, 504].includes(response.status))
        return {
          status: response.status,
          body: (await response.json()) as Answer["body"],
          attempts: attempt,
          failures,
        };
      failures.push(`status ${response.status}`);
      await response.body?.cancel();
    } catch (error) {
      failures.push(String((error as Error).cause ?? error));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  throw new Error(`${callKey} got no answer: ${failures.join("; ")}`);
}

describe("three instances behind HAProxy", () => {
  it("a mixed load with approvals decided in between and one instance SIGKILLed: no effect twice, one outcome each, books equal the provider", async () => {
    const policy = {
      rateConversationPerMin: 10_000,
      rateKeyPerMin: 10_000,
      autoLimitCents: 5000,
      sessionCapCents: 1_000_000,
      maxAutoWrites: 1000,
    };
    const worlds = await Promise.all(Array.from({ length: 3 }, () => createWorld(policy)));
    const agentEmail = (await db.user.findUniqueOrThrow({ where: { id: worlds[0].users.agent } })).email;
    await db.user.update({
      where: { id: worlds[0].users.agent },
      data: { passwordHash: await bcrypt.hash(PASSWORD, 4) },
    });
    expect((await signInOver(balancer.url, agentEmail, PASSWORD)).status).toBe(200);
    expect((await signInOver(balancer.url, agentEmail, `${PASSWORD}-wrong`)).status).toBe(401);

    const conversations = await Promise.all(
      worlds.flatMap((world) =>
        Array.from({ length: 4 }, async () => {
          const response = await fetch(`${balancer.url}/api/v1/conversations`, {
            method: "POST",
            headers: { authorization: `Bearer ${world.keys.agent}` },
            body: JSON.stringify({ customer_id: world.customers.ana }),
          });
          expect(response.status).toBe(201);
          return { world, id: ((await response.json()) as { id: string }).id };
        }),
      ),
    );
    // Refund requests wait a little at the provider, so some are in flight when the instance dies.
    await fetch(`${provider.url}/_faults`, {
      method: "POST",
      body: JSON.stringify({ faults: Array.from({ length: 40 }, () => ({ mode: "delay", ms: 150 })), clear: true }),
    });

    const jobs = Array.from({ length: 120 }, (_, index) => {
      const { world, id } = conversations[index % conversations.length];
      const kind = index % 4;
      const body =
        kind === 0
          ? refund(world.orders.o1004, 8000)
          : kind === 1
            ? refund(world.orders.o1001, 100)
            : kind === 2
              ? refund(world.orders.o1004, 150)
              : { name: "get_order", arguments: { order_id: world.orders.o1001 } };
      return { world, conversation: id, body, callKey: `lb-${index}` };
    });

    const supervisorCookies = await Promise.all(worlds.map((world) => personCookie(world.users.supervisor)));
    let decisions = 0;
    const decidePending = async () => {
      for (const [index, world] of worlds.entries()) {
        const pending = await db.approvalRequest.findMany({
          where: { tenantId: world.tenantId, status: "pending" },
          select: { id: true },
        });
        for (const request of pending) {
          const decision = decisions++ % 3 === 2 ? "deny" : "approve";
          try {
            await callAction(
              balancer.url,
              "/approvals",
              "decideApprovalsAction",
              [
                decision === "deny"
                  ? { ids: [request.id], decision, reason: "load test" }
                  : { ids: [request.id], decision },
              ],
              supervisorCookies[index],
            );
          } catch {
            // Sent to the instance that died: still pending, decided on the next round.
          }
        }
      }
    };

    let sent = 0;
    let killed = false;
    const answers = new Map<string, Answer>();
    let burstDone = false;
    const approver = (async () => {
      while (!burstDone) {
        await decidePending();
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (;;) {
          const job = jobs[sent++];
          if (!job) return;
          if (!killed && sent >= 45) {
            killed = true;
            process.kill(instances[1].pid, "SIGKILL");
          }
          answers.set(job.callKey, await proposeUntilAnswered(job.world, job.conversation, job.body, job.callKey));
        }
      }),
    );
    burstDone = true;
    await approver;
    expect(await instances[1].exited).toBe("SIGKILL");
    // The balancer's health checks take the killed instance out within a few check intervals, however fast the burst was.
    await expect.poll(() => balancer.up(), { timeout: 20_000, interval: 250 }).toEqual(["app1", "app3"]);

    // Whatever is still pending gets decided; whatever is still unknown at the provider gets reconciled.
    await decidePending();
    const client = httpPaymentProvider({ url: provider.url, secret: provider.secret });
    const tenants = { in: worlds.map((world) => world.tenantId) };
    const open = async () => ({
      unsettled: await db.refund.count({
        where: { tenantId: tenants, status: { in: ["reserved", "unknown", "investigate"] } },
      }),
      pending: await db.approvalRequest.count({ where: { tenantId: tenants, status: "pending" } }),
    });
    for (let round = 0; round < 20 && Object.values(await open()).some((count) => count > 0); round++) {
      for (const world of worlds) await reconcileRefunds({ provider: client, minAgeMs: 0, tenantId: world.tenantId });
      await decidePending();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(await open()).toEqual({ unsettled: 0, pending: 0 });

    // Every logical call got an answer, every answer is a recorded call.
    expect(answers.size).toBe(jobs.length);
    expect([...answers.values()].every((answer) => answer.status === 200)).toBe(true);
    const calls = await db.toolCall.findMany({
      where: { conversationId: { in: conversations.map((conversation) => conversation.id) } },
    });
    const callIds = new Set(calls.map((call) => call.id));
    for (const answer of answers.values()) expect(callIds.has(answer.body.id)).toBe(true);
    // One outcome each: none left waiting for a supervisor or for the provider.
    expect(calls.filter((call) => call.kind === "pending_approval" || call.code === "refund.outcome-unknown")).toEqual(
      [],
    );
    // No effect twice: one refund row per call that made one, one provider refund per issued row, totals equal.
    const stats = (await (await fetch(`${provider.url}/_stats`)).json()) as {
      totalsByOrder: Record<string, number>;
      refunds: number;
    };
    const refunds = await db.refund.findMany({ where: { tenantId: tenants } });
    expect(new Set(refunds.map((row) => row.toolCallId)).size).toBe(refunds.length);
    const orders = worlds.flatMap((world) => Object.values(world.orders));
    await expectRefundInvariants(orders, stats.totalsByOrder);
    expect({
      issued: refunds.filter((row) => row.status === "issued").length,
      statuses: [...new Set(refunds.map((row) => row.status))],
    }).toEqual({ issued: stats.refunds, statuses: ["issued"] });
    expect(refunds.some((row) => row.status === "issued")).toBe(true);
    expect(calls.some((call) => call.code === "approval.denied")).toBe(true);

    const output = instances.map((instance) => instance.output()).join("\n");
    for (const world of worlds) for (const key of Object.values(world.keys)) expect(output).not.toContain(key);
    expect(output).not.toContain(PASSWORD);
  });
});
