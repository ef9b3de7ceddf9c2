import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "@/scripts/dev/fake-provider";
import { httpPaymentProvider } from "@/lib/payments/provider/provider";
import { SIGNATURE_HEADER, signAnswer } from "@/lib/payments/provider/signature";

// The provider client against real sockets: what counts as an answer, what stays uncertain, and that refunds
// reuse one connection.

const REQUEST = { order_id: "ord_1001", amount_cents: 100, currency: "USD", reason: "damaged" };
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function rawServer(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ url: string; connections: () => number }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer(handle);
  server.on("connection", (socket) => {
    connections++;
    sockets.add(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    connections: () => connections,
  };
}

/** Answers as the provider would, signed with `secret`. */
function signed(response: ServerResponse, status: number, body: unknown, secret = "sk_x") {
  const raw = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    [SIGNATURE_HEADER]: signAnswer(secret, status, raw),
  });
  response.end(raw);
}

async function fake(options: Parameters<typeof startFakeProvider>[0] = {}): Promise<FakeProvider> {
  const provider = await startFakeProvider(options);
  closers.push(() => provider.close());
  return provider;
}

describe("the payment provider's HTTP client", () => {
  it("sends the key and the secret, reads the answer, and keeps one connection for consecutive refunds", async () => {
    const seen: { key: string | undefined; auth: string | undefined; body: string }[] = [];
    const server = await rawServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      request.on("end", () => {
        const key = request.headers["idempotency-key"] as string | undefined;
        seen.push({ key, auth: request.headers.authorization, body });
        signed(response, 200, { id: `re_${seen.length}`, idempotency_key: key });
      });
    });
    const client = httpPaymentProvider({ url: server.url, secret: "sk_x", attempts: 1 });
    for (let i = 1; i <= 5; i++)
      expect(await client.refund(`rf_${i}`, REQUEST)).toEqual({ kind: "succeeded", refundId: `re_${i}` });
    expect(seen.map((request) => request.key)).toEqual(["rf_1", "rf_2", "rf_3", "rf_4", "rf_5"]);
    expect(
      seen.every((request) => request.auth === "Bearer sk_x" && JSON.parse(request.body).amount_cents === 100),
    ).toBe(true);
    expect(server.connections()).toBe(1);
  });

  it("an answer whose body never finishes is a timeout: uncertain, after every attempt", async () => {
    let requests = 0;
    const server = await rawServer((_request, response) => {
      requests++;
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"id":');
    });
    const client = httpPaymentProvider({ url: server.url, secret: "sk_x", timeoutMs: 100, attempts: 2, backoffMs: 1 });
    expect(await client.refund("rf_slow", REQUEST)).toEqual({
      kind: "uncertain",
      reason: "TimeoutError: no answer within 100 ms",
    });
    expect(requests).toBe(2);
  });

  it("a connection cut in the middle of the answer is uncertain, never succeeded", async () => {
    const server = await rawServer((request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      response.write('{"id":"re_1"');
      setTimeout(() => request.socket.destroy(), 10);
    });
    const client = httpPaymentProvider({ url: server.url, secret: "sk_x", attempts: 1 });
    const answer = await client.refund("rf_cut", REQUEST);
    expect(answer.kind).toBe("uncertain");
  });

  it("an answer that is not the provider's own is uncertain, whatever its status: not JSON, unsigned, badly signed, or about another key", async () => {
    const answers: ((response: ServerResponse, key: string) => void)[] = [
      (response) => {
        response.writeHead(400, { "content-type": "text/html" });
        response.end("<html>Bad Request</html>");
      },
      (response, key) => {
        response.writeHead(402, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { type: "refund_error", code: "declined", idempotency_key: key } }));
      },
      (response, key) =>
        signed(response, 402, { error: { type: "refund_error", code: "declined", idempotency_key: key } }, "sk_other"),
      (response) =>
        signed(response, 402, {
          error: { type: "refund_error", code: "declined", idempotency_key: "rf_someone_else" },
        }),
      (response, key) =>
        signed(response, 401, {
          error: { type: "authentication_error", code: "invalid_api_key", idempotency_key: key },
        }),
      (response, key) =>
        signed(response, 404, {
          error: { type: "invalid_request_error", code: "route_not_found", idempotency_key: key },
        }),
      (response, key) => signed(response, 200, { id: "re_1", idempotency_key: `${key}_x` }),
    ];
    for (const answer of answers) {
      const server = await rawServer((request, response) =>
        answer(
          response,
          (request.headers["idempotency-key"] as string) ??
            new URL(request.url!, "http://x").searchParams.get("idempotency_key")!,
        ),
      );
      const client = httpPaymentProvider({ url: server.url, secret: "sk_x", attempts: 1 });
      expect((await client.refund("rf_bad", REQUEST)).kind).toBe("uncertain");
      expect((await client.lookup("rf_bad")).kind).toBe("uncertain");
    }
  });

  it("a signed refusal for this key is definite, but not after an attempt under the same key was uncertain", async () => {
    let requests = 0;
    const server = await rawServer((request, response) => {
      requests++;
      const key = request.headers["idempotency-key"] as string;
      if (key === "rf_after_cut" && requests === 2) return request.socket.destroy();
      signed(response, 402, { error: { type: "refund_error", code: "declined", idempotency_key: key } });
    });
    const client = httpPaymentProvider({ url: server.url, secret: "sk_x", attempts: 2, backoffMs: 1 });
    expect(await client.refund("rf_declined", REQUEST)).toEqual({
      kind: "refused",
      reason: "provider refused: declined",
    });
    const afterCut = await client.refund("rf_after_cut", REQUEST);
    expect(afterCut).toEqual({ kind: "uncertain", reason: "provider refused: declined after an uncertain attempt" });
    expect(requests).toBe(3);
  });

  it("the probe passes only when the provider itself answers a never-used key with its signed not-found", async () => {
    const provider = await fake();
    expect(await httpPaymentProvider({ url: provider.url, secret: provider.secret }).probe()).toEqual({ ok: true });
    for (const [url, secret] of [
      [`${provider.url}/wrong/base`, provider.secret],
      [provider.url, "sk_rotated"],
      ["http://127.0.0.1:1", provider.secret],
    ]) {
      const probe = await httpPaymentProvider({ url, secret, attempts: 1 }).probe();
      expect(probe.ok).toBe(false);
    }
  });

  it("nobody listening is uncertain, and a lookup through the fake provider finds what a refund made", async () => {
    const provider = await fake();
    const down = httpPaymentProvider({ url: "http://127.0.0.1:1", secret: provider.secret, attempts: 1 });
    expect((await down.refund("rf_down", REQUEST)).kind).toBe("uncertain");

    const client = httpPaymentProvider({ url: `${provider.url}/`, secret: provider.secret });
    const made = await client.refund("rf_made", REQUEST);
    expect(made.kind).toBe("succeeded");
    expect(await client.lookup("rf_made")).toEqual({
      kind: "found",
      refundId: (made as { refundId: string }).refundId,
    });
    expect(await client.lookup("rf_never")).toEqual({ kind: "not-found" });
  });
});

describe("the fake provider behaves like a real one", () => {
  it("forgets a key after its retention: a late re-send under the same key is a second refund", async () => {
    const provider = await fake({ retentionMs: 100 });
    const client = httpPaymentProvider({ url: provider.url, secret: provider.secret });
    const first = await client.refund("rf_old", REQUEST);
    expect(await client.refund("rf_old", REQUEST)).toEqual(first);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await client.lookup("rf_old")).toEqual({ kind: "not-found" });
    const late = await client.refund("rf_old", REQUEST);
    expect(late.kind).toBe("succeeded");
    expect(late).not.toEqual(first);
    expect(provider.state.made.map((refund) => refund.amount_cents)).toEqual([100, 100]);
  });

  it("answers 409 idempotency_key_in_use to a request whose key is still being handled", async () => {
    const provider = await fake();
    await fetch(`${provider.url}/_faults`, {
      method: "POST",
      body: JSON.stringify({ faults: [{ mode: "delay", ms: 300 }] }),
    });
    const client = httpPaymentProvider({ url: provider.url, secret: provider.secret, attempts: 1 });
    const slow = client.refund("rf_busy", REQUEST);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await client.refund("rf_busy", REQUEST)).toEqual({
      kind: "uncertain",
      reason: "provider answered 409 idempotency_key_in_use",
    });
    expect((await slow).kind).toBe("succeeded");
    expect(provider.state.made).toHaveLength(1);
  });

  it("a restart keeps its records when handed its state, and loses them when not", async () => {
    const provider = await startFakeProvider();
    const made = await httpPaymentProvider({ url: provider.url, secret: provider.secret }).refund("rf_kept", REQUEST);
    await provider.close();
    const kept = await fake({ state: provider.state });
    expect(await httpPaymentProvider({ url: kept.url, secret: kept.secret }).lookup("rf_kept")).toEqual({
      kind: "found",
      refundId: (made as { refundId: string }).refundId,
    });
    const lost = await fake();
    expect(await httpPaymentProvider({ url: lost.url, secret: lost.secret }).lookup("rf_kept")).toEqual({
      kind: "not-found",
    });
  });
});
