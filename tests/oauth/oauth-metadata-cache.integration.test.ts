import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { resolveClient, type DocumentFetcher } from "@/lib/oauth/clients/clients";
import { fetchMetadataDocument } from "@/lib/oauth/clients/fetch-document";

// A client's metadata document is kept as long as its own HTTP cache headers say, within 60 s and 24 h (issue 34):
// the real outbound fetch reads the headers from a local server standing in for the client's site.

let server: http.Server;
let base: string;
const hits = new Map<string, number>();
const HEADERS: Record<string, Record<string, string>> = {
  "/ten-minutes.json": { "cache-control": "public, max-age=600" },
  "/aged.json": { "cache-control": "max-age=600", age: "500" },
  "/shared.json": { "cache-control": "max-age=60, s-maxage=7200" },
  "/no-store.json": { "cache-control": "no-store" },
  "/a-year.json": { "cache-control": "max-age=31536000" },
  "/expires.json": {
    date: "Sat, 05 Dec 2026 10:00:00 GMT",
    expires: "Sat, 05 Dec 2026 12:00:00 GMT",
  },
  "/silent.json": {},
};

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const path = request.url ?? "";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const clientId = `https://cache.example${path}`;
    response.writeHead(200, { "content-type": "application/json", ...HEADERS[path] });
    response.end(JSON.stringify({ client_id: clientId, redirect_uris: ["http://127.0.0.1:1/cb"] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.OUTBOUND_ALLOWED_HOSTS = "127.0.0.1";
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  delete process.env.OUTBOUND_ALLOWED_HOSTS;
});

// The client's https URL is fetched from the local server, through the real fetcher and guard.
const local: DocumentFetcher = (url, limits) => fetchMetadataDocument(new URL(url.pathname, base), limits);

async function keptFor(path: string): Promise<number> {
  const clientId = `https://cache.example${path}`;
  await db.oAuthClient.deleteMany({ where: { id: clientId } });
  const started = Date.now();
  const lookup = await resolveClient(clientId, local, `usr_cache_${clientId.length}`);
  expect(lookup.ok).toBe(true);
  const row = await db.oAuthClient.findUniqueOrThrow({ where: { id: clientId } });
  return Math.round((row.cacheUntil!.getTime() - started) / 1000);
}

describe("caching a client's metadata document", () => {
  it("keeps each document as long as its cache headers say, never under a minute or over a day", async () => {
    const kept = Object.fromEntries(
      await Promise.all(Object.keys(HEADERS).map(async (path) => [path, await keptFor(path)] as const)),
    );
    const near = (value: number) => expect.closeTo(value, -1);
    expect(kept).toEqual({
      "/ten-minutes.json": near(600),
      "/aged.json": near(100),
      "/shared.json": near(7200),
      "/no-store.json": near(60),
      "/a-year.json": near(86400),
      "/expires.json": near(7200),
      "/silent.json": near(3600),
    });
  });

  it("answers from the copy until it ends, then fetches the document again", async () => {
    const clientId = `https://cache.example/ten-minutes.json`;
    await db.oAuthClient.deleteMany({ where: { id: clientId } });
    const before = hits.get("/ten-minutes.json") ?? 0;
    expect((await resolveClient(clientId, local, `usr_cache_${clientId.length}`)).ok).toBe(true);
    expect((await resolveClient(clientId, local, `usr_cache_${clientId.length}`)).ok).toBe(true);
    expect(hits.get("/ten-minutes.json")).toBe(before + 1);
    await db.oAuthClient.update({ where: { id: clientId }, data: { cacheUntil: new Date(Date.now() - 1000) } });
    expect((await resolveClient(clientId, local, `usr_cache_${clientId.length}`)).ok).toBe(true);
    expect(hits.get("/ten-minutes.json")).toBe(before + 2);
  });
});
