import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METADATA_LIMITS, resolveClient } from "@/lib/oauth/clients";
import { fetchMetadataDocument } from "@/lib/oauth/fetch-document";
import { db } from "@/lib/db";

// Client ID Metadata Documents through the real outbound guard: an address inside the network is refused before
// any connection, and a document that is too large or too slow is refused within the limits; nothing is cached.

let server: http.Server;
let base: string;
let hits = 0;
beforeAll(async () => {
  server = http.createServer((request, response) => {
    hits += 1;
    if (request.url === "/big.json") {
      response.end(JSON.stringify({ client_id: "x", padding: "x".repeat(METADATA_LIMITS.maxBytes) }));
    } else if (request.url === "/slow.json") {
      setTimeout(() => response.end("{}"), METADATA_LIMITS.timeoutMs + 2000).unref();
    } else response.end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  delete process.env.OUTBOUND_ALLOWED_HOSTS;
});

describe("fetching a client's metadata document", () => {
  it("refuses a metadata URL that points at 127.0.0.1 or a name resolving to loopback, without connecting", async () => {
    const port = (server.address() as AddressInfo).port;
    for (const clientId of [`https://127.0.0.1:${port}/client.json`, `https://localhost:${port}/client.json`]) {
      const lookup = await resolveClient(clientId, fetchMetadataDocument);
      expect(lookup.ok).toBe(false);
      expect(lookup.ok ? "" : lookup.reason).toMatch(/could not be fetched/);
      expect(await db.oAuthClient.count({ where: { id: clientId } })).toBe(0);
    }
    expect(hits).toBe(0);
  });

  it("stops reading an oversized document and gives up on a slow one, within the limits", async () => {
    process.env.OUTBOUND_ALLOWED_HOSTS = "127.0.0.1";
    const big = await fetchMetadataDocument(new URL(`${base}/big.json`), METADATA_LIMITS);
    expect(big).toMatchObject({ ok: false, reason: expect.stringMatching(/larger than 16384 bytes/) });
    const started = Date.now();
    const slow = await fetchMetadataDocument(new URL(`${base}/slow.json`), METADATA_LIMITS);
    expect(slow.ok).toBe(false);
    expect(Date.now() - started).toBeLessThan(METADATA_LIMITS.timeoutMs + 1500);
  }, 20_000);
});
