import { afterAll, beforeAll } from "vitest";
import net from "node:net";

/**
 * A TCP proxy between the app and the payment provider that misbehaves like the network and the boxes in
 * between: faults are queued and consumed one per HTTP request, in arrival order.
 *
 * - pass: nothing happens to this request;
 * - cut: the request reaches the provider, the answer is lost (the connection closes when it starts);
 * - reset: the connection is reset before anything is forwarded;
 * - delay: the answer is held back `ms` milliseconds;
 * - status: the provider's answer arrives with its status line rewritten to `status`;
 * - answer: the proxy answers `status` itself with an HTML error page and forwards nothing (a load balancer,
 *   a gateway with a rotated credential, a deploy in progress).
 */
export type ProxyFault =
  | { mode: "pass" }
  | { mode: "cut" }
  | { mode: "reset" }
  | { mode: "delay"; ms: number }
  | { mode: "status"; status: number }
  | { mode: "answer"; status: number };

export interface FaultProxy {
  url: string;
  faults(faults: ProxyFault[]): void;
  /** Drops the faults no request has taken yet. */
  clearFaults(): void;
  /** Requests that went through to the provider. */
  forwarded(): number;
  close(): Promise<void>;
}

const REQUEST_LINE = /^(GET|POST|PUT|DELETE|PATCH|HEAD) \/\S* HTTP\/1\.[01]\r\n/;

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const queue: ProxyFault[] = [];
  const sockets = new Set<net.Socket>();
  let forwarded = 0;

  const server = net.createServer((client) => {
    sockets.add(client);
    const provider = net.connect(Number(upstream.port), upstream.hostname);
    sockets.add(provider);
    // The fault of the request now in flight on this connection; Node's client sends one request at a time.
    let current: ProxyFault | undefined;
    let answering = false;
    const end = () => {
      client.destroy();
      provider.destroy();
    };
    client.on("error", end);
    provider.on("error", end);
    client.on("close", () => provider.destroy());
    provider.on("close", () => client.destroy());

    client.on("data", (chunk: Buffer) => {
      if (REQUEST_LINE.test(chunk.toString("latin1", 0, 4096))) {
        current = queue.shift();
        answering = false;
        if (current?.mode === "reset") return client.resetAndDestroy();
        if (current?.mode === "answer") {
          const page = `<html><body><h1>${current.status}</h1></body></html>`;
          client.end(
            `HTTP/1.1 ${current.status} Intermediary\r\ncontent-type: text/html\r\ncontent-length: ${page.length}\r\nconnection: close\r\n\r\n${page}`,
          );
          return provider.destroy();
        }
        forwarded++;
      } else if (current?.mode === "answer" || current?.mode === "reset") return;
      provider.write(chunk);
    });

    provider.on("data", (chunk: Buffer) => {
      const first = !answering;
      answering = true;
      if (current?.mode === "cut") return end();
      let out = chunk;
      if (first && current?.mode === "status")
        out = Buffer.from(
          chunk.toString("latin1").replace(/^HTTP\/1\.1 \d{3} [^\r]*/, `HTTP/1.1 ${current.status} Rewritten`),
          "latin1",
        );
      if (current?.mode === "delay") {
        provider.pause();
        setTimeout(() => {
          client.write(out);
          provider.resume();
        }, current.ms);
        return;
      }
      client.write(out);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}${upstream.pathname === "/" ? "" : upstream.pathname}`,
    faults: (faults) => void queue.push(...faults),
    clearFaults: () => void queue.splice(0),
    forwarded: () => forwarded,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A fault proxy of this test file's own in front of its fake provider (from ownExternals), started before its tests:
 * the app's provider address points at the proxy while they run.
 */
export function ownFaultProxy(externals: { provider: { url: string } }): FaultProxy {
  const handle = {} as FaultProxy;
  beforeAll(async () => {
    Object.assign(handle, await startFaultProxy(externals.provider.url));
    process.env.PAYMENT_PROVIDER_URL = handle.url;
  });
  afterAll(() => handle.close?.());
  return handle;
}
