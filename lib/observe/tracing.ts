import { SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import { redact } from "./log";
import { env } from "../env";

// OpenTelemetry traces: off unless the standard variables ask for them (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_TRACES_EXPORTER=otlp; OTEL_SDK_DISABLED=true wins). One trace per
// API request, a span per gateway stage, per gateway SQL statement and per payment-provider request. Spans
// carry ids, names, codes and statement texts (parameters stay out), never argument values. While tracing is
// off, `span` calls its function directly: the request path pays one boolean test.

const KEY = Symbol.for("toolgate.tracing");
const globalForTracing = globalThis as unknown as { [KEY]?: { enabled: boolean; shutdown: () => Promise<void> } };

const tracer = () => trace.getTracer("toolgate");

export const tracingEnabled = (): boolean => globalForTracing[KEY]?.enabled ?? false;

export function tracingRequested(env: Record<string, string | undefined> = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === "true") return false;
  const exporter = env.OTEL_TRACES_EXPORTER;
  if (exporter)
    return exporter
      .split(",")
      .map((name) => name.trim())
      .includes("otlp");
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Registers the tracer provider once per process. `exporter` is the OTLP exporter in production and an
 * in-memory one in tests; `simple` exports each span as it ends (tests) instead of in batches.
 */
export async function startTracing(exporter?: SpanExporter, { simple = false } = {}): Promise<void> {
  if (globalForTracing[KEY]) return;
  const { NodeTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } = await import("@opentelemetry/sdk-trace-node");
  const { detectResources, envDetector, resourceFromAttributes } = await import("@opentelemetry/resources");
  const chosen = exporter ?? new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter();
  const resource = resourceFromAttributes({ "service.name": env().OTEL_SERVICE_NAME }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [simple ? new SimpleSpanProcessor(chosen) : new BatchSpanProcessor(chosen)],
  });
  provider.register();
  globalForTracing[KEY] = { enabled: true, shutdown: () => provider.shutdown() };
}

/** Flushes and stops the exporter (graceful shutdown). */
export async function stopTracing(): Promise<void> {
  await globalForTracing[KEY]?.shutdown();
}

/** Runs `work` inside a span that is the current one for everything it awaits; `work` may add attributes. */
export function span<T>(name: string, attributes: Attributes, work: (span: Span | null) => T): T {
  if (!tracingEnabled()) return work(null);
  return tracer().startActiveSpan(name, { attributes }, (active) => {
    const end = (error?: unknown) => {
      if (error !== undefined) {
        active.recordException({
          name: error instanceof Error ? error.name : "Error",
          message: redact(error instanceof Error ? error.message : String(error)),
        });
        active.setStatus({ code: SpanStatusCode.ERROR });
      }
      active.end();
    };
    try {
      const result = work(active);
      if (result instanceof Promise) {
        return result.then(
          (value) => {
            end();
            return value;
          },
          (error: unknown) => {
            end(error);
            throw error;
          },
        ) as T;
      }
      end();
      return result;
    } catch (error) {
      end(error);
      throw error;
    }
  });
}

/** A span ended by the caller, for work that finishes in a callback (a provider request). */
export function startSpan(name: string, attributes: Attributes): Span | null {
  return tracingEnabled() ? tracer().startSpan(name, { attributes }) : null;
}
