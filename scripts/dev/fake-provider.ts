import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { SIGNATURE_HEADER, signAnswer } from "../../lib/payments/provider/signature";

/**
 * A stand-in payment provider with Stripe-like refund semantics, for development and tests. It speaks HTTP
 * like the real thing, so the client under test is the production client.
 *
 * - POST /v1/refunds with an Idempotency-Key: the same key and body returns the first result; the same key
 *   with another body is a 409.
 * - GET /v1/refunds?idempotency_key=K: the refund made under that key (402 if it was declined), or 404
 *   `resource_missing` naming the key. Every answer is signed with the shared secret (lib/payments/provider/signature.ts).
 * - A decline (error_before) is stored under its key like a success, as a real provider stores results.
 * - Keys are forgotten `retentionMs` after first use (Stripe: 24 hours); a request whose key is still being
 *   handled gets 409 `idempotency_key_in_use`. A restart keeps its records when given the old `state`.
 * - POST /_faults {"faults": [...], "clear"?: true} queues faults consumed one per refund request, in arrival order:
 *   delay (answer late), error_before (definite 402, nothing done), unavailable_before (503, nothing done),
 *   error_after (act, then 500), timeout_after (act, then never answer), drop_response (act, then cut the
 *   connection). GET /_stats counts requests and refunds per order; POST /_reset forgets everything.
 */

export type FaultMode =
  "delay" | "error_before" | "unavailable_before" | "error_after" | "timeout_after" | "drop_response";
export interface Fault {
  mode: FaultMode;
  ms?: number;
}

export interface StoredRefund {
  id: string;
  idempotency_key: string;
  body: string;
  order_id: string;
  amount_cents: number;
  currency: string;
  status: "succeeded";
  created: string;
  declined?: boolean;
}

const declined = (key: string) => ({ error: { type: "refund_error", code: "declined", idempotency_key: key } });

/** What a restart keeps when it is handed back: the refunds by key and what every key was asked. */
export interface FakeProviderState {
  byKey: Map<string, StoredRefund>;
  /** Every refund ever made, forgotten keys included, for the totals. */
  made: StoredRefund[];
  requestsByKey: Map<string, number>;
  lookupsByKey: Map<string, number>;
}

export interface FakeProvider {
  url: string;
  secret: string;
  state: FakeProviderState;
  close(): Promise<void>;
}

export interface FakeProviderOptions {
  port?: number;
  host?: string;
  secret?: string;
  /** How long a key's result is kept; a request with a forgotten key is a new refund. */
  retentionMs?: number;
  /** The records of an earlier run: a restart that keeps them. Without it, a restart forgets everything. */
  state?: FakeProviderState;
}

export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const secret = options.secret ?? "sk_test_toolgate";
  const retentionMs = options.retentionMs ?? 24 * 60 * 60_000;
  const state: FakeProviderState = options.state ?? {
    byKey: new Map(),
    made: [],
    requestsByKey: new Map(),
    lookupsByKey: new Map(),
  };
  const { byKey } = state;
  const inFlight = new Set<string>();
  let faults: Fault[] = [];
  const stats = { refundRequests: 0, lookups: 0 };
  const hanging = new Set<ServerResponse>();

  const json = (response: ServerResponse, status: number, body: unknown) => {
    const raw = JSON.stringify(body);
    response.writeHead(status, {
      "content-type": "application/json",
      [SIGNATURE_HEADER]: signAnswer(secret, status, raw),
    });
    response.end(raw);
  };

  function remembered(key: string): StoredRefund | undefined {
    const refund = byKey.get(key);
    if (refund && Date.now() - Date.parse(refund.created) >= retentionMs) byKey.delete(key);
    return byKey.get(key);
  }

  async function readBody(request: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }

  function act(key: string, raw: string): { status: number; body: unknown } {
    const existing = remembered(key);
    if (existing) {
      if (existing.body !== raw)
        return {
          status: 409,
          body: { error: { type: "idempotency_error", code: "idempotency_key_reused", idempotency_key: key } },
        };
      return existing.declined ? { status: 402, body: declined(key) } : { status: 200, body: publicRefund(existing) };
    }
    const parsed = JSON.parse(raw) as { order_id?: unknown; amount_cents?: unknown; currency?: unknown };
    if (
      typeof parsed.order_id !== "string" ||
      !Number.isInteger(parsed.amount_cents) ||
      typeof parsed.currency !== "string"
    ) {
      return {
        status: 400,
        body: { error: { type: "invalid_request_error", code: "parameter_missing", idempotency_key: key } },
      };
    }
    const refund: StoredRefund = {
      id: `re_fake_${randomBytes(8).toString("hex")}`,
      idempotency_key: key,
      body: raw,
      order_id: parsed.order_id,
      amount_cents: parsed.amount_cents as number,
      currency: parsed.currency,
      status: "succeeded",
      created: new Date().toISOString(),
    };
    byKey.set(key, refund);
    state.made.push(refund);
    return { status: 200, body: publicRefund(refund) };
  }

  /** A decline is a result too: stored under its key, so every later request with that key gets it again. */
  function decline(key: string, raw: string): { status: number; body: unknown } {
    if (!remembered(key))
      byKey.set(key, {
        id: "",
        idempotency_key: key,
        body: raw,
        order_id: "",
        amount_cents: 0,
        currency: "",
        status: "succeeded",
        created: new Date().toISOString(),
        declined: true,
      });
    return act(key, raw);
  }

  const publicRefund = ({ body: _body, declined: _declined, ...refund }: StoredRefund) => refund;

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? "/", "http://provider");
    if (url.pathname.startsWith("/_")) return control(url, request, response);
    if (request.headers.authorization !== `Bearer ${secret}`)
      return json(response, 401, { error: { type: "authentication_error", code: "invalid_api_key" } });

    if (request.method === "GET" && url.pathname === "/v1/refunds") {
      stats.lookups++;
      const key = url.searchParams.get("idempotency_key") ?? "";
      state.lookupsByKey.set(key, (state.lookupsByKey.get(key) ?? 0) + 1);
      const refund = remembered(key);
      if (refund?.declined) return json(response, 402, declined(key));
      return refund
        ? json(response, 200, publicRefund(refund))
        : json(response, 404, { error: { type: "resource_missing", code: "refund_not_found", idempotency_key: key } });
    }
    if (request.method === "POST" && url.pathname === "/v1/refunds") {
      stats.refundRequests++;
      const key = request.headers["idempotency-key"];
      const raw = await readBody(request);
      if (typeof key !== "string" || key.length === 0)
        return json(response, 400, { error: { type: "invalid_request_error", code: "idempotency_key_missing" } });
      state.requestsByKey.set(key, (state.requestsByKey.get(key) ?? 0) + 1);
      if (inFlight.has(key))
        return json(response, 409, {
          error: { type: "idempotency_error", code: "idempotency_key_in_use", idempotency_key: key },
        });
      inFlight.add(key);
      try {
        await refundOnce(key, raw, request, response);
      } finally {
        inFlight.delete(key);
      }
      return;
    }
    json(response, 404, { error: { type: "invalid_request_error", code: "route_not_found" } });
  }

  async function refundOnce(key: string, raw: string, request: IncomingMessage, response: ServerResponse) {
    const queued = faults.shift();
    // Idempotency answers a replay before anything else, as a real provider's does: a key it already acted
    // on is never declined afterwards, whatever fault was queued.
    const fault =
      remembered(key) && (queued?.mode === "error_before" || queued?.mode === "unavailable_before")
        ? undefined
        : queued;
    if (fault?.mode === "delay") await new Promise((resolve) => setTimeout(resolve, fault.ms ?? 500));
    if (fault?.mode === "error_before") {
      const refused = decline(key, raw);
      return json(response, refused.status, refused.body);
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

  async function control(url: URL, request: IncomingMessage, response: ServerResponse) {
    if (url.pathname === "/_faults" && request.method === "POST") {
      const body = JSON.parse((await readBody(request)) || "{}") as { faults?: Fault[]; clear?: boolean };
      if (body.clear) faults = [];
      faults.push(...(body.faults ?? []));
      return json(response, 200, { queued: faults.length });
    }
    if (url.pathname === "/_stats") {
      const totals: Record<string, number> = {};
      for (const refund of state.made) totals[refund.order_id] = (totals[refund.order_id] ?? 0) + refund.amount_cents;
      const [requestsByKey, lookupsByKey] = [
        Object.fromEntries(state.requestsByKey),
        Object.fromEntries(state.lookupsByKey),
      ];
      return json(response, 200, {
        ...stats,
        refunds: state.made.length,
        totalsByOrder: totals,
        requestsByKey,
        lookupsByKey,
        faultsQueued: faults.length,
      });
    }
    if (url.pathname === "/_reset" && request.method === "POST") {
      byKey.clear();
      state.made.length = 0;
      state.requestsByKey.clear();
      state.lookupsByKey.clear();
      faults = [];
      stats.refundRequests = 0;
      stats.lookups = 0;
      return json(response, 200, { reset: true });
    }
    json(response, 404, { error: { type: "invalid_request_error", code: "route_not_found" } });
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
    state,
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
