import http from "node:http";
import https from "node:https";
import { startProviderRequest } from "../metrics";

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
  /** The provider says it did not and will not act on this key. */
  | { kind: "refused"; reason: string }
  /** It may or may not have acted: never reported as done, never as failed. */
  | { kind: "uncertain"; reason: string };

export type ProviderLookup =
  | { kind: "found"; refundId: string }
  | { kind: "declined"; reason: string }
  | { kind: "not-found" }
  | { kind: "uncertain"; reason: string };

export interface PaymentProvider {
  refund(key: string, request: ProviderRefundRequest): Promise<ProviderAnswer>;
  lookup(key: string): Promise<ProviderLookup>;
}

export interface HttpProviderOptions {
  url: string;
  secret: string;
  /** Per attempt. */
  timeoutMs?: number;
  /** Attempts on transport errors and 5xx, all with the same key. */
  attempts?: number;
  backoffMs?: number;
}

interface Exchange {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
}

type Answer = { status: number; body: Record<string, unknown> } | { transport: string };

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
          let parsed: Record<string, unknown> = {};
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
          } catch {
            // Not JSON: the status alone decides.
          }
          finish({ status: response.statusCode ?? 0, body: parsed });
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

  return {
    async refund(key, request) {
      const body = JSON.stringify(request);
      const exchange: Exchange = {
        method: "POST",
        path: "/v1/refunds",
        headers: { ...auth, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "idempotency-key": key },
        body,
      };
      let last = "no attempt made";
      for (let attempt = 0; attempt < attempts; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** (attempt - 1)));
        const answer = await once(exchange);
        if ("transport" in answer) {
          last = answer.transport;
          continue;
        }
        if (answer.status >= 200 && answer.status < 300 && typeof answer.body.id === "string") return { kind: "succeeded", refundId: answer.body.id };
        // 409: this key was used with another body. Nothing to retry, and nothing we can call refused either.
        if (answer.status === 409) return { kind: "uncertain", reason: "provider reports the key was used with another request" };
        if (answer.status >= 400 && answer.status < 500 && answer.status !== 429) return { kind: "refused", reason: `provider answered ${answer.status}` };
        last = `provider answered ${answer.status}`;
      }
      return { kind: "uncertain", reason: last };
    },

    async lookup(key) {
      const answer = await once({ method: "GET", path: `/v1/refunds?idempotency_key=${encodeURIComponent(key)}`, headers: auth });
      if ("transport" in answer) return { kind: "uncertain", reason: answer.transport };
      if (answer.status === 200 && typeof answer.body.id === "string") return { kind: "found", refundId: answer.body.id };
      if (answer.status === 404) return { kind: "not-found" };
      if (answer.status === 402) return { kind: "declined", reason: "provider declined this key" };
      return { kind: "uncertain", reason: `provider answered ${answer.status}` };
    },
  };
}

let configured: PaymentProvider | null = null;

/** The provider named by PAYMENT_PROVIDER_URL and PAYMENT_PROVIDER_SECRET. */
export function paymentProvider(): PaymentProvider {
  if (!configured) {
    const url = process.env.PAYMENT_PROVIDER_URL;
    const secret = process.env.PAYMENT_PROVIDER_SECRET;
    if (!url || !secret) throw new Error("PAYMENT_PROVIDER_URL and PAYMENT_PROVIDER_SECRET must be set to issue refunds");
    configured = httpPaymentProvider({
      url,
      secret,
      timeoutMs: Number(process.env.PAYMENT_PROVIDER_TIMEOUT_MS ?? 2000),
      attempts: Number(process.env.PAYMENT_PROVIDER_ATTEMPTS ?? 3),
    });
  }
  return configured;
}
