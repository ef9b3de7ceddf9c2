import { NextRequest } from "next/server";
import { afterEach, describe, expect, it } from "vitest";
import { GET as metricsRoute } from "@/app/api/metrics/route";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { db } from "@/lib/db";
import { POST as authRoute } from "@/app/api/auth/[...nextauth]/route";
import { instanceMetrics } from "@/lib/instance/metrics";
import { httpPaymentProvider } from "@/lib/payments/provider/provider";
import { getToolCall, openConversation } from "../support/api";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { createWorld } from "../support/world";

// GET /api/metrics through its route handler: the counters the gateway, the approvals, the provider client and
// the sign-in throttle feed, and the gauges read from the database at scrape time.

/** From loopback (the address Next.js puts in X-Forwarded-For for the socket), unless the headers say otherwise. */
async function scrape(headers: Record<string, string> = {}) {
  const response = await metricsRoute(
    new Request("http://toolgate.test/api/metrics", { headers: { "x-forwarded-for": "127.0.0.1", ...headers } }),
  );
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
}

/** The value of one sample, 0 when the series does not exist yet. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split("\n")) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = match[2] ? match[2].split(",") : [];
    if (wanted.every((pair) => have.includes(pair)) && have.length === wanted.length) return Number(match[3]);
  }
  return 0;
}

afterEach(() => {
  delete process.env.METRICS_TOKEN;
});

describe("GET /api/metrics", () => {
  it("outside production without METRICS_TOKEN answers loopback only", async () => {
    for (const address of ["203.0.113.7", "10.0.0.2", "::ffff:10.0.0.2", "unknown"]) {
      const { status, text } = await scrape({ "x-forwarded-for": address });
      expect([address, status]).toEqual([address, 401]);
      expect(text).not.toContain("toolgate_");
    }
    expect((await scrape({ "x-forwarded-for": "::1" })).status).toBe(200);
  });

  it("answers in the Prometheus text format without a token when METRICS_TOKEN is unset", async () => {
    const { status, type, text } = await scrape();
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toContain("# TYPE toolgate_decisions_total counter");
    expect(sample(text, "toolgate_database_up")).toBe(1);
    expect(text).toContain("process_cpu_user_seconds_total");
  });

  it("wants the bearer token when METRICS_TOKEN is set", async () => {
    process.env.METRICS_TOKEN = "scrape-secret-0123456789";
    const refused: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong" },
      { authorization: "scrape-secret-0123456789" },
      { authorization: "Bearer scrape-secret-01234567890" },
    ];
    for (const headers of refused) {
      const { status, text } = await scrape(headers);
      expect(status).toBe(401);
      expect(text).not.toContain("toolgate_");
    }
    const { status, text } = await scrape({ authorization: "Bearer scrape-secret-0123456789" });
    expect(status).toBe(200);
    expect(text).toContain("toolgate_decisions_total");
  });

  it("counts decisions by tool, kind, stage and code, gateway latency per tool, rate-limit rejections and provider requests", async () => {
    const world = await createWorld({ rateConversationPerMin: 3 });
    const conversation = await agentConversation(world);
    const issued = { tool: "issue_refund", kind: "executed", stage: "execute", code: "refund.issued" };
    const invalid = { tool: "issue_refund", kind: "rejected", stage: "semantic", code: "amount.invalid" };
    const limited = { tool: "(unknown)", kind: "rejected", stage: "rate", code: "rate.limited" };
    const before = (await scrape()).text;

    expect((await proposeAsAgent(world, conversation, refund(world.orders.o1001, 1200))).json.code).toBe(
      "refund.issued",
    );
    expect((await proposeAsAgent(world, conversation, refund(world.orders.o1001, -5))).json.code).toBe(
      "amount.invalid",
    );
    await proposeAsAgent(world, conversation, refund(world.orders.o1001, 100));
    expect((await proposeAsAgent(world, conversation, refund(world.orders.o1001, 100))).json.code).toBe("rate.limited");

    const after = (await scrape()).text;
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);
    // Each test file runs in its own process, so these counters move only with this file's calls.
    expect(delta("toolgate_decisions_total", issued)).toBe(2);
    expect(delta("toolgate_decisions_total", invalid)).toBe(1);
    expect(delta("toolgate_decisions_total", limited)).toBe(1);
    expect(delta("toolgate_rate_limited_total", { limit: "call" })).toBe(1);
    expect(delta("toolgate_gateway_duration_seconds_count", { tool: "issue_refund" })).toBe(3);
    expect(delta("toolgate_gateway_duration_seconds_count", { tool: "(unknown)" })).toBe(1);
    expect(delta("toolgate_gateway_duration_seconds_sum", { tool: "issue_refund" })).toBeGreaterThan(0);
    expect(delta("toolgate_provider_request_duration_seconds_count", { operation: "refund" })).toBe(2);
    // Nothing about the arguments reaches a label.
    expect(after).not.toContain(world.orders.o1001);
    expect(after).not.toContain(conversation);
  });

  it("observes the approval decision latency from the request to the supervisor's decision", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const pending = await proposeAsAgent(world, conversation, refund(world.orders.o1004, 8000));
    expect(pending.json.code).toBe("approval.required");
    await db.approvalRequest.update({
      where: { id: pending.json.approval!.id },
      data: { createdAt: new Date(Date.now() - 90_000) },
    });
    const before = (await scrape()).text;
    const decided = await approveRequest(
      { userId: world.users.supervisor, tenantId: world.tenantId, role: "SUPERVISOR" },
      pending.json.approval!.id,
    );
    expect(decided.ok).toBe(true);
    const after = (await scrape()).text;
    const delta = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(delta("toolgate_approval_decision_seconds_count", { status: "approved" })).toBe(1);
    expect(delta("toolgate_approval_decision_seconds_sum", { status: "approved" })).toBeGreaterThanOrEqual(90);
    expect(delta("toolgate_approval_decision_seconds_bucket", { status: "approved", le: "60" })).toBe(0);
    expect(delta("toolgate_approval_decision_seconds_bucket", { status: "approved", le: "120" })).toBe(1);
    expect(
      delta("toolgate_decisions_total", {
        tool: "issue_refund",
        kind: "executed",
        stage: "execute",
        code: "refund.issued",
      }),
    ).toBe(1);
  });

  it("counts provider errors by kind, sign-in throttle rejections, conversations a key may not open and reads of a call past the agent's budget", async () => {
    const world = await createWorld({ rateOpenPerMin: 1, rateKeyPerMin: 1 });
    const before = (await scrape()).text;
    const down = httpPaymentProvider({ url: "http://127.0.0.1:1", secret: "s", attempts: 2, backoffMs: 1 });
    expect((await down.refund("k", { order_id: "o", amount_cents: 1, currency: "USD", reason: "damaged" })).kind).toBe(
      "uncertain",
    );
    expect((await down.lookup("k")).kind).toBe("uncertain");
    // An account locked by earlier wrong passwords: the sign-in route refuses the next attempt before any check.
    const email = `nobody-${world.tenantId}@acme.test`;
    await db.signInThrottle.create({
      data: { key: `account:${email}`, failures: 4, lockedUntil: new Date(Date.now() + 60_000) },
    });
    const refused = await authRoute(
      new NextRequest("http://127.0.0.1:3000/api/auth/callback/credentials", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email, password: "wrong", json: "true" }),
      }),
      { params: Promise.resolve({ nextauth: ["callback", "credentials"] }) },
    );
    expect(refused.status).toBe(429);
    expect((await openConversation(world.keys.agent, { customer_id: world.customers.ana })).status).toBe(201);
    expect((await openConversation(world.keys.agent, { customer_id: world.customers.ana })).status).toBe(429);
    expect((await getToolCall(world.keys.agent, "call_doesnotexist")).status).toBe(404);
    expect((await getToolCall(world.keys.agent, "call_doesnotexist")).status).toBe(429);
    const after = (await scrape()).text;
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(delta("toolgate_provider_errors_total", { operation: "refund", error: "transport" })).toBe(2);
    expect(delta("toolgate_provider_errors_total", { operation: "lookup", error: "transport" })).toBe(1);
    expect(delta("toolgate_signin_throttled_total")).toBe(1);
    expect(delta("toolgate_rate_limited_total", { limit: "conversation_open" })).toBe(1);
    expect(delta("toolgate_rate_limited_total", { limit: "request" })).toBe(1);
  });

  it("reads the approval queue, outbox and unknown refunds from the database at scrape time", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    const gauge = (text: string, name: string) => sample(text, name);
    // One snapshot (repeatable read) for the baseline and the rows added, so other files' rows cannot move it.
    await db
      .$transaction(
        async (tx) => {
          const baseline = (await instanceMetrics(tx)).body;
          const old = (seconds: number) => new Date(Date.now() - seconds * 1000);
          for (const [index, age] of [600, 30].entries()) {
            await tx.approvalRequest.create({
              data: {
                id: `apr_m${index}_${world.tenantId}`,
                tenantId: world.tenantId,
                conversationId: conversation,
                originCallId: `call_m${index}_${world.tenantId}`,
                toolName: "issue_refund",
                orderId: world.orders.o1004,
                argsHash: `h${index}`,
                impactCents: 1,
                preview: {},
                status: "pending",
                requestedById: world.users.agent,
                expiresAt: old(-600),
                createdAt: old(age),
              },
            });
          }
          const mail = (id: string, status: string, lastError: string | null) => ({
            id: `${id}_${world.tenantId}`,
            tenantId: world.tenantId,
            kind: "k",
            recipient: "r@example.test",
            subject: "s",
            body: "b",
            status,
            lastError,
          });
          await tx.outboxMessage.createMany({
            data: [
              mail("m1", "pending", null),
              mail("m2", "pending", "smtp down"),
              mail("m3", "sending", "smtp down"),
              mail("m4", "dead", "gave up"),
              mail("m5", "sent", null),
            ],
          });
          await tx.toolCall.create({
            data: {
              id: `call_r_${world.tenantId}`,
              tenantId: world.tenantId,
              conversationId: conversation,
              toolName: "issue_refund",
              kind: "unavailable",
              stage: "execute",
              code: "refund.outcome-unknown",
              outcome: {},
            },
          });
          const refundRow = (id: string, status: string, age: number) => ({
            id: `${id}_${world.tenantId}`,
            tenantId: world.tenantId,
            orderId: world.orders.o1004,
            toolCallId: `call_r_${world.tenantId}`,
            amountCents: 1,
            currency: "USD",
            reason: "damaged",
            status,
            providerKey: `${id}_${world.tenantId}`,
            createdAt: old(age),
          });
          await tx.refund.createMany({
            data: [
              refundRow("rf1", "unknown", 7200),
              refundRow("rf2", "investigate", 60),
              refundRow("rf3", "issued", 9999),
              // Paid past its order's total (decision 031): open until a supervisor closes it, then no longer counted.
              { ...refundRow("rf4", "issued", 60), overpaidCents: 300, overpaidAt: old(30) },
              { ...refundRow("rf5", "issued", 60), overpaidCents: 300, overpaidAt: old(30), overpaidClosedAt: old(10) },
            ],
          });

          const now = (await instanceMetrics(tx)).body;
          const delta = (name: string) => gauge(now, name) - gauge(baseline, name);
          expect(delta("toolgate_approval_queue_depth")).toBe(2);
          expect(delta("toolgate_outbox_pending")).toBe(3);
          expect(delta("toolgate_outbox_retried")).toBe(2);
          expect(delta("toolgate_outbox_dead")).toBe(1);
          expect(delta("toolgate_refunds_unknown_outcome")).toBe(2);
          expect(delta("toolgate_refunds_overpaid_open")).toBe(1);
          expect(gauge(now, "toolgate_approval_oldest_pending_seconds")).toBeGreaterThan(590);
          expect(gauge(now, "toolgate_refunds_unknown_oldest_seconds")).toBeGreaterThan(7190);
          throw new Error("rollback");
        },
        { isolationLevel: "RepeatableRead" },
      )
      .catch((error: Error) => {
        if (error.message !== "rollback") throw error;
      });
  });
});
