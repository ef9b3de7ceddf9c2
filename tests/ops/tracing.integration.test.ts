import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { beforeAll, describe, expect, it } from "vitest";
import { startTracing, tracingRequested } from "@/lib/observe/tracing";
import { newCallKey, propose } from "../support/api";
import { agentConversation, proposeAsAgent, refund } from "../support/calls";
import { createWorld, moreOrders } from "../support/world";
import { OLD_ORDERS, SECOND_REFUND_WAITS } from "../policy-rules/examples";
import { putRules } from "../policy-rules/support";

// The trace of one refund through the real route, exported to memory by the same provider setup the app uses
// with the OTLP exporter.

const exporter = new InMemorySpanExporter();

beforeAll(async () => {
  await startTracing(exporter, { simple: true });
});

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** The stages of the one call proposed since the last reset, in the order they ran. */
function stagesOfTheCall(): string[] {
  const spans = exporter.getFinishedSpans();
  const calls = spans.filter((span) => span.name === "gateway.propose");
  expect(calls).toHaveLength(1);
  return spans
    .filter((span) => span.name.startsWith("gateway.") && parentOf(span) === calls[0].spanContext().spanId)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
    .map((span) => span.name.slice("gateway.".length));
}

const CHECKS = ["rate", "parse", "allowlist", "scope", "schema", "semantic", "idempotency", "state", "policy", "rules"];

describe("OpenTelemetry traces", () => {
  it("are off unless the standard variables ask for them", () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: "otlp" })).toBe(true);
    expect(
      tracingRequested({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }),
    ).toBe(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(
      false,
    );
  });

  it("one refund is one trace: the request, the call with its decision, a span per stage, per SQL statement and per provider request", async () => {
    const world = await createWorld();
    const conversation = await agentConversation(world);
    exporter.reset();
    const response = await proposeAsAgent(world, conversation, {
      name: "issue_refund",
      arguments: { order_id: world.orders.o1001, amount_cents: 1237, currency: "USD", reason: "wrong_item" },
    });
    expect(response.json.code).toBe("refund.issued");

    const spans = exporter.getFinishedSpans();
    const root = spans.find((span) => span.name === "POST /api/v1/conversations/{id}/tool-calls")!;
    expect(root).toBeDefined();
    expect(parentOf(root)).toBeUndefined();
    expect(root.attributes).toMatchObject({
      "http.response.status_code": 200,
      "toolgate.request_id": response.headers.get("x-request-id"),
    });
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([root.spanContext().traceId]));

    const call = spans.find((span) => span.name === "gateway.propose")!;
    expect(parentOf(call)).toBe(root.spanContext().spanId);
    expect(call.attributes).toEqual({
      "toolgate.call_id": response.json.id,
      "toolgate.tool": "issue_refund",
      "toolgate.decision.kind": "executed",
      "toolgate.decision.stage": "execute",
      "toolgate.decision.code": "refund.issued",
    });

    const stages = spans
      .filter((span) => span.name.startsWith("gateway.") && parentOf(span) === call.spanContext().spanId)
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
      .map((span) => span.name);
    expect(stages).toEqual([
      "gateway.rate",
      "gateway.parse",
      "gateway.allowlist",
      "gateway.scope",
      "gateway.schema",
      "gateway.semantic",
      // The conversation's lock and the call's facts (stage 7) are sent with BEGIN, in the transaction's first round
      // trip (docs/decisions/027 and 028).
      "gateway.idempotency",
      "gateway.state",
      "gateway.policy",
      "gateway.rules",
      // The exposure ceilings' reservation (docs/decisions/028) and the call's record (docs/decisions/023) are made in
      // the effect's own statement.
      "gateway.execute",
      "gateway.external",
    ]);
    const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
    const statements = spans.filter((span) => span.name === "db.query");
    const statementParents = new Set(statements.map((span) => byId.get(parentOf(span)!)?.name));
    // The key lookup, before the call: a statement of the request itself.
    expect(statementParents).toContain(root.name);
    expect(statementParents).toContain("gateway.execute");
    expect(statements.map((span) => span.attributes["db.query.text"])).toEqual(
      expect.arrayContaining([
        // The call's facts, its order read by its key (orderById), after the conversation's lock.
        expect.stringMatching(/^BEGIN;[^]*FOR UPDATE OF c;[^]*FROM \(SELECT \* FROM "Order" WHERE "id" = [^]*$/),
        // The effect's statement, with the COMMIT sent in its round trip (docs/decisions/029).
        expect.stringMatching(/"ExposureTotal"[^]*; COMMIT$/),
      ]),
    );
    const providerSpans = spans.filter((span) => span.name === "provider.refund");
    expect(providerSpans).toHaveLength(1);
    expect(byId.get(parentOf(providerSpans[0])!)?.name).toBe("gateway.external");
    expect(providerSpans[0].attributes).toMatchObject({
      "http.response.status_code": 200,
      "toolgate.provider.error": "none",
    });

    if (process.env.PRINT_TRACE) printTree(spans, root);
    // No argument value in any name or attribute.
    const text = JSON.stringify(
      spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events })),
    );
    for (const value of [world.orders.o1001, "1237", "wrong_item", world.keys.agent]) expect(text).not.toContain(value);
  });

  it("names the stages each path takes: a read, a held call, a ceiling's refusal, a rule read under the reservation, a replay", async () => {
    const world = await createWorld({ agentDailyCeilingCents: 3000 });
    const [first, second] = await moreOrders(world, 2);
    const conversation = await agentConversation(world);
    const run = async (call: unknown, key?: string) => {
      exporter.reset();
      const response = await propose(world.keys.agent, conversation, call, key);
      return { code: response.json.code, stages: stagesOfTheCall() };
    };

    expect(await run({ name: "get_order", arguments: { order_id: first } })).toEqual({
      code: "order.read",
      // A read runs outside a transaction: its facts are a statement of their own, and so is its record.
      stages: [...CHECKS.slice(0, 6), "context", ...CHECKS.slice(6), "execute", "record"],
    });
    expect(await run(refund(first, 9000))).toEqual({
      code: "approval.required",
      stages: [...CHECKS, "approval", "record"],
    });
    // The effect's own statement reserves first and commits with it; a ceiling that refuses leaves it without a write,
    // and the call waits.
    expect(await run(refund(first, 2000))).toEqual({
      code: "refund.issued",
      stages: [...CHECKS, "execute", "external"],
    });
    expect(await run(refund(second, 2000))).toEqual({
      code: "approval.required",
      // The first try's statement commits nothing; the call is checked again in a transaction that commits on its own.
      stages: [...CHECKS, "execute", ...CHECKS.slice(6), "execute", "ceilings", "approval", "record"],
    });

    // When one of the live rules reads the agent's refunds today, the reservation comes first and the rules are judged
    // again under it.
    const fresh = await createWorld();
    await putRules(fresh, `${OLD_ORDERS}\n\n${SECOND_REFUND_WAITS}`);
    const [order] = await moreOrders(fresh, 1);
    const theirs = await agentConversation(fresh);
    exporter.reset();
    const ruled = await propose(fresh.keys.agent, theirs, refund(order, 1000), newCallKey());
    expect(ruled.json.code).toBe("refund.issued");
    expect(stagesOfTheCall()).toEqual([...CHECKS, "ceilings", "rules", "execute", "external"]);

    // The same call key again is a replay: the decision log records it, and nothing runs.
    const key = newCallKey();
    await propose(world.keys.agent, conversation, { name: "send_status_email", arguments: { order_id: first } }, key);
    expect(await run({ name: "send_status_email", arguments: { order_id: first } }, key)).toEqual({
      code: "email.queued",
      stages: ["rate", "parse", "allowlist", "scope", "schema", "semantic", "idempotency", "record"],
    });
  });
});

/** The excerpt in docs/DEPLOY.md: `PRINT_TRACE=1 npx vitest run tests/ops/tracing.integration.test.ts`. */
function printTree(spans: ReadableSpan[], root: ReadableSpan) {
  const ms = (span: ReadableSpan) => (span.duration[0] * 1000 + span.duration[1] / 1e6).toFixed(1);
  const walk = (span: ReadableSpan, depth: number) => {
    const attrs = Object.entries(span.attributes)
      .filter(([key]) => key !== "db.system.name")
      .map(([key, value]) => `${key}=${String(value).replace(/\s+/g, " ").trim().slice(0, 60)}`)
      .join(" ");
    console.log(`${"  ".repeat(depth)}${span.name} ${ms(span)} ms ${attrs}`);
    spans
      .filter((child) => parentOf(child) === span.spanContext().spanId)
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
      .forEach((child) => walk(child, depth + 1));
  };
  walk(root, 0);
}
