import { randomBytes } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { SIGNATURE_HEADER, verifyAnswer } from "./signature";
import { startProviderRequest } from "../../observe/metrics";
import { env } from "../../env";

/**
 * The payment-provider boundary. Every request carries the host-derived idempotency key, so any request may
 * be repeated safely; what matters is telling a definite answer from an uncertain one.
 */

export interface ProviderRefundRequest {
  order_id: string;
  amount_cents: number;
  currency: string;
  reason: string;
}

export type ProviderAnswer =
  | { kind: "succeeded"; refundId: string }
  /** The provider itself says, signed and for this key, that it did not and will not act on it. */
  | { kind: "refused"; reason: string }
  /** It may or may not have acted: never reported as done, never as failed. */
  | { kind: "uncertain"; reason: string };

export type ProviderLookup =
  | { kind: "found"; refundId: string }
  | { kind: "declined"; reason: string }
  /** The provider's own signed "no refund under this key", never a bare 404 from whatever answered. */
  | { kind: "not-found" }
  | { kind: "uncertain"; reason: string };

/** Whether the configured base URL and secret reach the provider itself, asked before each reconciliation pass. */
export type ProviderProbe = { ok: true } | { ok: false; reason: string };

export interface PaymentProvider {
  refund(key: string, request: ProviderRefundRequest): Promise<ProviderAnswer>;
  lookup(key: string): Promise<ProviderLookup>;
  probe(): Promise<ProviderProbe>;
}

export interface HttpProviderOptions {
  url: string;
  secret: string;
  /** Per attempt. */
  timeoutMs?: number;
  /** Attempts on uncertain answers, all with the same key. */
  attempts?: number;
  backoffMs?: number;
}

interface Exchange {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
}

type Answer = { status: number; body: Record<string, unknown>; signed: boolean } | { transport: string };

/** The provider's documented refusals: the request was invalid or the refund declined, nothing was done. */
const REFUSALS = new Set(["invalid_request_error", "refund_error"]);

function errorOf(body: Record<string, unknown>): { type?: unknown; code?: unknown; idempotency_key?: unknown } {
  const error = body.error;
  return typeof error === "object" && error !== null ? (error as Record<string, unknown>) : {};
}

/** A signed, structured answer that names this key; anything else may have come from something in between. */
function readRefund(answer: Answer, key: string): ProviderAnswer {
  if ("transport" in answer) return { kind: "uncertain", reason: answer.transport };
  if (!answer.signed) return { kind: "uncertain", reason: `unsigned answer ${answer.status}, not the provider's` };
  const { status, body } = answer;
  if (status >= 200 && status < 300 && typeof body.id === "string" && body.idempotency_key === key)
    return { kind: "succeeded", refundId: body.id };
  const error = errorOf(body);
  if (
    (status === 400 || status === 402) &&
    typeof error.type === "string" &&
    REFUSALS.has(error.type) &&
    error.idempotency_key === key
  ) {
    return { kind: "refused", reason: `provider refused: ${String(error.code ?? error.type)}` };
  }
  return {
    kind: "uncertain",
    reason: `provider answered ${status}${typeof error.code === "string" ? ` ${error.code}` : ""}`,
  };
}

function readLookup(answer: Answer, key: string): ProviderLookup {
  if ("transport" in answer) return { kind: "uncertain", reason: answer.transport };
  if (!answer.signed) return { kind: "uncertain", reason: `unsigned answer ${answer.status}, not the provider's` };
  const { status, body } = answer;
  const error = errorOf(body);
  if (status === 200 && typeof body.id === "string" && body.idempotency_key === key)
    return { kind: "found", refundId: body.id };
  if (status === 402 && error.type === "refund_error" && error.idempotency_key === key)
    return { kind: "declined", reason: "provider declined this key" };
  if (status === 404 && error.type === "resource_missing" && error.idempotency_key === key)
    return { kind: "not-found" };
  return { kind: "uncertain", reason: `provider answered ${status} without an answer for this key` };
}

export function httpPaymentProvider(options: HttpProviderOptions): PaymentProvider {
  const timeoutMs = options.timeoutMs ?? 2000;
  const attempts = options.attempts ?? 3;
  const backoffMs = options.backoffMs ?? 100;
  const base = new URL(options.url);
  const basePath = base.pathname.replace(/\/$/, "");
  const transport = base.protocol === "https:" ? https : http;
  // Connections stay open between refunds: a new connection, or fetch's machinery, cost more than the request.
  const agent = new transport.Agent({ keepAlive: true, maxSockets: 64 });
  const auth = { authorization: `Bearer ${options.secret}` };

  /** One attempt; the timeout covers the whole exchange, the answer's body included. */
  function once({ method, path, headers, body }: Exchange): Promise<Answer> {
    const observed = startProviderRequest(method === "POST" ? "refund" : "lookup");
    return new Promise((resolve) => {
      let settled = false;
      const finish = (answer: Answer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        observed(answer);
        resolve(answer);
      };
      const failed = (error: Error) => finish({ transport: `${error.name}: ${error.message}` });
      const request = transport.request(new URL(`${basePath}${path}`, base), { method, headers, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", failed);
        response.on("close", () => {
          if (!response.complete) return failed(new Error("the connection closed before the answer was complete"));
          const raw = Buffer.concat(chunks).toString("utf8");
          const status = response.statusCode ?? 0;
          let parsed: Record<string, unknown> = {};
          try {
            const value: unknown = JSON.parse(raw);
            if (typeof value === "object" && value !== null) parsed = value as Record<string, unknown>;
          } catch {
            // Not JSON: not an answer from the provider, whatever the status.
          }
          const signature = response.headers[SIGNATURE_HEADER];
          finish({
            status,
            body: parsed,
            signed: verifyAnswer(options.secret, status, raw, typeof signature === "string" ? signature : undefined),
          });
        });
      });
      const timer = setTimeout(() => {
        const error = new Error(`no answer within ${timeoutMs} ms`);
        error.name = "TimeoutError";
        failed(error);
        request.destroy(error);
      }, timeoutMs);
      request.on("error", failed);
      request.end(body);
    });
  }

  const lookup = async (key: string) =>
    readLookup(
      await once({ method: "GET", path: `/v1/refunds?idempotency_key=${encodeURIComponent(key)}`, headers: auth }),
      key,
    );

  return {
    async refund(key, request) {
      const body = JSON.stringify(request);
      const exchange: Exchange = {
        method: "POST",
        path: "/v1/refunds",
        headers: {
          ...auth,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
          "idempotency-key": key,
        },
        body,
      };
      let last = "no attempt made";
      let uncertainBefore = false;
      for (let attempt = 0; attempt < attempts; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** (attempt - 1)));
        const answer = readRefund(await once(exchange), key);
        if (answer.kind === "succeeded") return answer;
        // A refusal after an attempt that may have acted could be an answer about something else: still unknown.
        if (answer.kind === "refused")
          return uncertainBefore
            ? { kind: "uncertain", reason: `${answer.reason} after an uncertain attempt` }
            : answer;
        last = answer.reason;
        uncertainBefore = true;
      }
      return { kind: "uncertain", reason: last };
    },

    lookup,

    async probe() {
      // A key no refund was ever made under: only the provider itself answers it with its signed not-found.
      const found = await lookup(`rf_probe_${randomBytes(12).toString("hex")}`);
      if (found.kind === "not-found") return { ok: true };
      return {
        ok: false,
        reason: found.kind === "uncertain" ? found.reason : `a never-used key came back ${found.kind}`,
      };
    },
  };
}

let configured: PaymentProvider | null = null;

/** The provider named by PAYMENT_PROVIDER_URL and PAYMENT_PROVIDER_SECRET. */
export function paymentProvider(): PaymentProvider {
  if (!configured) {
    const settings = env();
    const [url, secret] = [settings.PAYMENT_PROVIDER_URL, settings.PAYMENT_PROVIDER_SECRET];
    if (!url || !secret)
      throw new Error("PAYMENT_PROVIDER_URL and PAYMENT_PROVIDER_SECRET must be set to issue refunds");
    configured = httpPaymentProvider({
      url,
      secret,
      timeoutMs: settings.PAYMENT_PROVIDER_TIMEOUT_MS,
      attempts: settings.PAYMENT_PROVIDER_ATTEMPTS,
    });
  }
  return configured;
}
