import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";

// Operator-facing log lines: one JSON object per line on stderr. Every line written while a request is served
// carries its request id, and while a call is decided its call id too. Detail goes here, never to a caller;
// ids, names and codes only: no argument values, and anything shaped like a credential is masked.

export interface LogContext {
  requestId?: string;
  callId?: string;
}

const KEY = Symbol.for("toolgate.log.context");
const globalForLog = globalThis as unknown as { [KEY]?: AsyncLocalStorage<LogContext> };
const context = (globalForLog[KEY] ??= new AsyncLocalStorage<LogContext>());

/** Runs `work` with `fields` added to every log line it writes, directly or through anything it awaits. */
export function withLogContext<T>(fields: LogContext, work: () => T): T {
  return context.run({ ...context.getStore(), ...fields }, work);
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The load balancer's `X-Request-Id` when it is a plain token, else a new one. */
export function requestIdFrom(headers: Headers): string {
  const given = headers.get("x-request-id");
  return given && REQUEST_ID.test(given) ? given : randomUUID();
}

// API keys (tg_ and 43 characters), bearer and basic credentials, and password values, wherever they appear
// (the line is already JSON, so quotes inside a message come escaped).
const SECRETS: [RegExp, string][] = [
  [/\btg_[A-Za-z0-9_-]{16,}/g, "tg_[redacted]"],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, "$1 [redacted]"],
  [/(password\\?"?\s*[:=]\s*\\?"?)[^"\\\s,&}]+/gi, "$1[redacted]"],
];

export const redact = (text: string): string =>
  SECRETS.reduce((masked, [pattern, replacement]) => masked.replace(pattern, replacement), text);

function write(level: "info" | "error", event: string, fields: Record<string, unknown>): void {
  console.error(
    redact(JSON.stringify({ level, event, at: new Date().toISOString(), ...context.getStore(), ...fields })),
  );
}

export function logError(event: string, error: unknown, fields: Record<string, unknown> = {}): void {
  const detail = error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
  write("error", event, { ...fields, error: detail });
}

export function logInfo(event: string, fields: Record<string, unknown> = {}): void {
  write("info", event, fields);
}
