import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/**
 * A stand-in payment provider with Stripe-like refund semantics, for development and tests. It speaks HTTP
 * like the real thing, so the client under test is the production client.
 *
 * - POST /v1/refunds with an Idempotency-Key: the same key and body returns the first result; the same key
 *   with another body is a 409.
 * - GET /v1/refunds?idempotency_key=K: the refund made under that key (402 if it was declined), or 404.
 * - A decline (error_before) is stored under its key like a success, as a real provider stores results.
 * - POST /_faults {"faults": [...], "clear"?: true} queues faults consumed one per refund request, in arrival order:
 *   delay (answer late), error_before (definite 402, nothing done), unavailable_before (503, nothing done),
 *   error_after (act, then 500), timeout_after (act, then never answer), drop_response (act, then cut the
 *   connection). GET /_stats counts requests and refunds per order; POST /_reset forgets everything.
 */

export type FaultMode = "delay" | "error_before" | "unavailable_before" | "error_after" | "timeout_after" | "drop_response";
export interface Fault {
  mode: FaultMode;
  ms?: number;
}

interface StoredRefund {
  id: string;
  key: string;
  body: string;
  order_id: string;
  amount_cents: number;
  currency: string;
  status: "succeeded";
  created: string;
  declined?: boolean;
}

const DECLINED = { error: { type: "refund_error", code: "declined" } };

export interface FakeProvider {
  url: string;
  secret: string;
  close(): Promise<void>;
}

export async function startFakeProvider(options: { port?: number; host?: string; secret?: string } = {}): Promise<FakeProvider> {
  const secret = options.secret ?? "sk_test_toolgate";
  const byKey = new Map<string, StoredRefund>();
  let faults: Fault[] = [];
  const stats = { refundRequests: 0, lookups: 0 };
  const hanging = new Set<ServerResponse>();

  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };

  async function readBody(request: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }

  function act(key: string, raw: string): { status: number; body: unknown } {
    const existing = byKey.get(key);
    if (existing) {
      if (existing.body !== raw) return { status: 409, body: { error: { type: "idempotency_error", message: "key reused with another body" } } };
      return existing.declined ? { status: 402, body: DECLINED } : { status: 200, body: publicRefund(existing) };
    }
    const parsed = JSON.parse(raw) as { order_id?: unknown; amount_cents?: unknown; currency?: unknown };
    if (typeof parsed.order_id !== "string" || !Number.isInteger(parsed.amount_cents) || typeof parsed.currency !== "string") {
      return { status: 400, body: { error: { type: "invalid_request_error", message: "order_id, amount_cents and currency are required" } } };
    }
    const refund: StoredRefund = {
      id: `re_fake_${randomBytes(8).toString("hex")}`,
      key,
      body: raw,
      order_id: parsed.order_id,
      amount_cents: parsed.amount_cents as number,
      currency: parsed.currency,
      status: "succeeded",
      created: new Date().toISOString(),
    };
    byKey.set(key, refund);
    return { status: 200, body: publicRefund(refund) };
  }

  /** A decline is a result too: stored under its key, so every later request with that key gets it again. */
  function decline(key: string, raw: string): { status: number; body: unknown } {
    if (!byKey.has(key)) byKey.set(key, { id: "", key, body: raw, order_id: "", amount_cents: 0, currency: "", status: "succeeded", created: new Date().toISOString(), declined: true });
    return act(key, raw);
  }

  const publicRefund = ({ body: _body, declined: _declined, ...refund }: StoredRefund) => refund;
  const succeeded = () => [...byKey.values()].filter((refund) => !refund.declined);

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? "/", "http://provider");
    if (url.pathname.startsWith("/_")) return control(url, request, response);
    if (request.headers.authorization !== `Bearer ${secret}`) return json(response, 401, { error: { type: "authentication_error" } });

    if (request.method === "GET" && url.pathname === "/v1/refunds") {
      stats.lookups++;
      const refund = byKey.get(url.searchParams.get("idempotency_key") ?? "");
      if (refund?.declined) return json(response, 402, DECLINED);
      return refund ? json(response, 200, publicRefund(refund)) : json(response, 404, { error: { type: "not_found" } });
    }
    if (request.method === "POST" && url.pathname === "/v1/refunds") {
      stats.refundRequests++;
      const key = request.headers["idempotency-key"];
      const raw = await readBody(request);
      if (typeof key !== "string" || key.length === 0) return json(response, 400, { error: { type: "invalid_request_error", message: "Idempotency-Key required" } });
      const queued = faults.shift();
      // Idempotency answers a replay before anything else, as a real provider's does: a key it already acted
      // on is never declined afterwards, whatever fault was queued.
      const fault = byKey.has(key) && (queued?.mode === "error_before" || queued?.mode === "unavailable_before") ? undefined : queued;
      if (fault?.mode === "delay") await new Promise((resolve) => setTimeout(resolve, fault.ms ?? 500));
      if (fault?.mode === "error_before") {
        const declined = decline(key, raw);
        return json(response, declined.status, declined.body);
      }
      if (fault?.mode === "unavailable_before") return json(response, 503, { error: { type: "api_error" } });
      const result = act(key, raw);
      if (fault?.mode === "error_after") return json(response, 500, { error: { type: "api_error" } });
      if (fault?.mode === "drop_response") return request.socket.destroy();
      if (fault?.mode === "timeout_after") {
        hanging.add(response);
        return;
      }
      return json(response, result.status, result.body);
    }
    json(response, 404, { error: { type: "not_found" } });
  }

  async function control(url: URL, request: IncomingMessage, response: ServerResponse) {
    if (url.pathname === "/_faults" && request.method === "POST") {
      const body = JSON.parse((await readBody(request)) || "{}") as { faults?: Fault[]; clear?: boolean };
      if (body.clear) faults = [];
      faults.push(...(body.faults ?? []));
      return json(response, 200, { queued: faults.length });
    }
    if (url.pathname === "/_stats") {
      const totals: Record<string, number> = {};
      for (const refund of succeeded()) totals[refund.order_id] = (totals[refund.order_id] ?? 0) + refund.amount_cents;
      return json(response, 200, { ...stats, refunds: succeeded().length, totalsByOrder: totals, faultsQueued: faults.length });
    }
    if (url.pathname === "/_reset" && request.method === "POST") {
      byKey.clear();
      faults = [];
      stats.refundRequests = 0;
      stats.lookups = 0;
      return json(response, 200, { reset: true });
    }
    json(response, 404, { error: { type: "not_found" } });
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => json(response, 500, { error: { type: "api_error" } }));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    secret,
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
