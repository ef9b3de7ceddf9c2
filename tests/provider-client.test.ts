import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "@/lib/fake-provider/server";
import { httpPaymentProvider } from "@/lib/payments/provider";

// The provider client against real sockets: what counts as an answer, what stays uncertain, and that refunds
// reuse one connection.

const REQUEST = { order_id: "ord_1001", amount_cents: 100, currency: "USD", reason: "damaged" };
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function rawServer(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ url: string; connections: () => number }> {
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
  return { url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`, connections: () => connections };
}

async function fake(): Promise<FakeProvider> {
  const provider = await startFakeProvider();
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
        seen.push({ key: request.headers["idempotency-key"] as string | undefined, auth: request.headers.authorization, body });
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ id: `re_${seen.length}` }));
      });
    });
    const client = httpPaymentProvider({ url: server.url, secret: "sk_x", attempts: 1 });
    for (let i = 1; i <= 5; i++) expect(await client.refund(`rf_${i}`, REQUEST)).toEqual({ kind: "succeeded", refundId: `re_${i}` });
    expect(seen.map((request) => request.key)).toEqual(["rf_1", "rf_2", "rf_3", "rf_4", "rf_5"]);
    expect(seen.every((request) => request.auth === "Bearer sk_x" && JSON.parse(request.body).amount_cents === 100)).toBe(true);
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
    expect(await client.refund("rf_slow", REQUEST)).toEqual({ kind: "uncertain", reason: "TimeoutError: no answer within 100 ms" });
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

  it("a body that is not JSON leaves the status to decide", async () => {
    const server = await rawServer((request, response) => {
      response.writeHead(request.method === "GET" ? 404 : 400, { "content-type": "text/plain" });
      response.end("nope");
    });
    const client = httpPaymentProvider({ url: server.url, secret: "sk_x", attempts: 1 });
    expect(await client.refund("rf_bad", REQUEST)).toEqual({ kind: "refused", reason: "provider answered 400" });
    expect(await client.lookup("rf_bad")).toEqual({ kind: "not-found" });
  });

  it("nobody listening is uncertain, and a lookup through the fake provider finds what a refund made", async () => {
    const provider = await fake();
    const down = httpPaymentProvider({ url: "http://127.0.0.1:1", secret: provider.secret, attempts: 1 });
    expect((await down.refund("rf_down", REQUEST)).kind).toBe("uncertain");

    const client = httpPaymentProvider({ url: `${provider.url}/`, secret: provider.secret });
    const made = await client.refund("rf_made", REQUEST);
    expect(made.kind).toBe("succeeded");
    expect(await client.lookup("rf_made")).toEqual({ kind: "found", refundId: (made as { refundId: string }).refundId });
    expect(await client.lookup("rf_never")).toEqual({ kind: "not-found" });
  });
});
