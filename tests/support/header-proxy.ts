import http from "node:http";
import type { AddressInfo } from "node:net";

export interface HeaderProxy {
  /** The proxy's own address, `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
}

/**
 * A proxy in front of `target` that adds `headers` to every request and passes everything else through unchanged
 * (Host and Origin included), for a client that cannot send them itself: the MCP conformance CLI sends no
 * Authorization header.
 */
export async function headerProxy(target: string, headers: Record<string, string>): Promise<HeaderProxy> {
  const upstream = new URL(target);
  const server = http.createServer((request, answer) => {
    const forwarded = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: request.url,
        method: request.method,
        headers: { ...request.headers, ...headers },
      },
      (response) => {
        answer.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(answer);
      },
    );
    forwarded.on("error", () => answer.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
