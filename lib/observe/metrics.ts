import client from "prom-client";
import { startSpan } from "./tracing";

// Prometheus metrics of one app instance. The request path only increments counters and observes histograms
// in memory; the gauges that describe the shared database (queues, outbox, unsettled refunds) are read by one
// statement when /api/metrics is scraped (lib/instance/metrics.ts hands them in), so they read the same on
// every instance.

/** The database's gauges, read by one statement at each scrape. */
export interface DatabaseGauges {
  approvalsPending: number;
  approvalsOldestSeconds: number;
  outboxPending: number;
  outboxRetried: number;
  outboxDead: number;
  refundsUnknown: number;
  refundsUnknownOldestSeconds: number;
  refundsOverpaidOpen: number;
  reconcileProviderReachable: number;
}

interface Metrics {
  registry: client.Registry;
  decisions: client.Counter<"tool" | "kind" | "stage" | "code">;
  shadowVerdicts: client.Counter<"tool" | "rule" | "verdict">;
  gatewayLatency: client.Histogram<"tool">;
  approvalDecisionLatency: client.Histogram<"status">;
  providerLatency: client.Histogram<"operation">;
  providerErrors: client.Counter<"operation" | "error">;
  rateLimited: client.Counter<"limit">;
  signInThrottled: client.Counter;
  gauges: Record<keyof DatabaseGauges, client.Gauge>;
  databaseUp: client.Gauge;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// A supervisor's decision takes seconds to hours.
const DECISION_BUCKETS = [5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600];

function create(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const gauge = (name: string, help: string) => new client.Gauge({ name, help, registers: [registry] });
  return {
    registry,
    decisions: new client.Counter({
      name: "toolgate_decisions_total",
      help: "Decisions written to the decision log by this instance (gateway calls, replays, supervisors' decisions)",
      labelNames: ["tool", "kind", "stage", "code"],
      registers: [registry],
    }),
    shadowVerdicts: new client.Counter({
      name: "toolgate_rule_shadow_verdicts_total",
      help: "Shadow rule verdicts on gateway calls, per rule that would hold or deny ((none) when it would allow, (failed) when it could not decide)",
      labelNames: ["tool", "rule", "verdict"],
      registers: [registry],
    }),
    gatewayLatency: new client.Histogram({
      name: "toolgate_gateway_duration_seconds",
      help: "Time from a proposal's arrival at the gateway to its recorded decision",
      labelNames: ["tool"],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    approvalDecisionLatency: new client.Histogram({
      name: "toolgate_approval_decision_seconds",
      help: "Time from an approval request to the supervisor's decision",
      labelNames: ["status"],
      buckets: DECISION_BUCKETS,
      registers: [registry],
    }),
    providerLatency: new client.Histogram({
      name: "toolgate_provider_request_duration_seconds",
      help: "One request to the payment provider (each retry counts on its own)",
      labelNames: ["operation"],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    providerErrors: new client.Counter({
      name: "toolgate_provider_errors_total",
      help: "Payment-provider requests without a usable answer: transport errors, timeouts, 5xx and 429",
      labelNames: ["operation", "error"],
      registers: [registry],
    }),
    rateLimited: new client.Counter({
      name: "toolgate_rate_limited_total",
      help: "Requests refused by a rate limit: a call by the rate stage (limit=call), another request of the agent's budget (limit=request), opening a conversation (limit=conversation_open)",
      labelNames: ["limit"],
      registers: [registry],
    }),
    signInThrottled: new client.Counter({
      name: "toolgate_signin_throttled_total",
      help: "Sign-in attempts refused by the throttle",
      registers: [registry],
    }),
    gauges: {
      approvalsPending: gauge(
        "toolgate_approval_queue_depth",
        "Approval requests waiting for a supervisor (all tenants)",
      ),
      approvalsOldestSeconds: gauge(
        "toolgate_approval_oldest_pending_seconds",
        "Age of the oldest approval request still waiting (0 when none)",
      ),
      outboxPending: gauge("toolgate_outbox_pending", "Outbox messages not delivered yet"),
      outboxRetried: gauge("toolgate_outbox_retried", "Undelivered outbox messages that failed at least once"),
      outboxDead: gauge("toolgate_outbox_dead", "Outbox messages given up on"),
      refundsUnknown: gauge(
        "toolgate_refunds_unknown_outcome",
        "Refunds whose outcome at the provider is not known yet",
      ),
      refundsUnknownOldestSeconds: gauge(
        "toolgate_refunds_unknown_oldest_seconds",
        "Age of the oldest refund with an unknown outcome (0 when none)",
      ),
      refundsOverpaidOpen: gauge(
        "toolgate_refunds_overpaid_open",
        "Refunds the provider made after their release that paid an order past its total, not yet closed by a supervisor",
      ),
      reconcileProviderReachable: gauge(
        "toolgate_reconcile_provider_reachable",
        "1 when the last reconciliation pass reached the payment provider itself (or none ran yet), 0 when it paused: see the log",
      ),
    },
    databaseUp: gauge("toolgate_database_up", "1 when the database answered this scrape's statement, else 0"),
  };
}

// On globalThis under a registered symbol: Next.js may load this module once per bundle, and every copy must
// count into the registry the route serves.
const KEY = Symbol.for("toolgate.metrics");
const globalForMetrics = globalThis as unknown as { [KEY]?: Metrics };
const metrics = (): Metrics => (globalForMetrics[KEY] ??= create());

/** One recorded decision; the tool is a registry name or "(unknown)", so labels stay few. */
export function countDecision(
  tool: string,
  outcome: { kind: string; stage: string; code: string },
  latencyMs?: number,
): void {
  const m = metrics();
  m.decisions.inc({ tool, kind: outcome.kind, stage: outcome.stage, code: outcome.code });
  if (latencyMs !== undefined) m.gatewayLatency.observe({ tool }, latencyMs / 1000);
  if (outcome.code === "rate.limited") m.rateLimited.inc({ limit: "call" });
}

/**
 * The shadow rules' verdict on one call: one count per rule that would hold or deny it, else one for the allow or
 * the failure. Rule ids are the tenants' own (at most 100 a set), so the labels stay bounded.
 */
export function countShadowVerdict(
  tool: string,
  verdict: { verdict: "allow" | "hold" | "deny" | "failed"; rules?: { id: string }[] },
): void {
  const m = metrics();
  if (verdict.verdict === "allow" || verdict.verdict === "failed") {
    m.shadowVerdicts.inc({ tool, rule: verdict.verdict === "allow" ? "(none)" : "(failed)", verdict: verdict.verdict });
    return;
  }
  for (const rule of verdict.rules ?? []) m.shadowVerdicts.inc({ tool, rule: rule.id, verdict: verdict.verdict });
}

export function observeApprovalDecision(status: string, requestedAt: Date): void {
  metrics().approvalDecisionLatency.observe({ status }, Math.max(0, (Date.now() - requestedAt.getTime()) / 1000));
}

/**
 * Starts timing one provider request (a span too, when tracing is on); the returned function takes its answer:
 * a status, or the transport failure (a timeout's starts with "TimeoutError").
 */
export function startProviderRequest(
  operation: "refund" | "lookup",
): (answer: { status: number } | { transport: string }) => void {
  const startedAt = performance.now();
  const traced = startSpan(`provider.${operation}`, { "toolgate.provider.operation": operation });
  return (answer) => {
    const m = metrics();
    m.providerLatency.observe({ operation }, (performance.now() - startedAt) / 1000);
    const error =
      "transport" in answer
        ? answer.transport.startsWith("TimeoutError")
          ? "timeout"
          : "transport"
        : answer.status >= 500
          ? "5xx"
          : answer.status === 429
            ? "429"
            : null;
    if (error) m.providerErrors.inc({ operation, error });
    if (traced) {
      traced.setAttributes({
        "toolgate.provider.error": error ?? "none",
        ...("status" in answer ? { "http.response.status_code": answer.status } : {}),
      });
      traced.end();
    }
  };
}

/** One request of an agent past its per-minute budget that is not a call (a read of a call's outcome). */
export function countRequestLimited(): void {
  metrics().rateLimited.inc({ limit: "request" });
}

/** One conversation an API key may not open this minute. */
export function countConversationOpenLimited(): void {
  metrics().rateLimited.inc({ limit: "conversation_open" });
}

/** For the sign-in throttle: one refused attempt. */
export function countSignInThrottled(): void {
  metrics().signInThrottled.inc();
}

/** The Prometheus text of this instance, with the database gauges `readGauges` reads now. */
export async function metricsText(
  readGauges: () => Promise<DatabaseGauges>,
): Promise<{ contentType: string; body: string }> {
  const m = metrics();
  try {
    const values = await readGauges();
    for (const [name, gauge] of Object.entries(m.gauges)) gauge.set(values[name as keyof DatabaseGauges]);
    m.databaseUp.set(1);
  } catch {
    // The process metrics and counters are still worth a scrape; the gauges keep their last values.
    m.databaseUp.set(0);
  }
  return { contentType: m.registry.contentType, body: await m.registry.metrics() };
}
