import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { METADATA_FETCH_LIMITS, METADATA_LIMITS, resolveClient } from "@/lib/oauth/clients/clients";
import { fetchMetadataDocument } from "@/lib/oauth/clients/fetch-document";
import { db } from "@/lib/db";
import { freshWindow, FRESH_WINDOW_TIMEOUT_MS } from "../support/oauth";
import { postConsent } from "../support/oauth-grant";
import { signedIn } from "../support/signed-in";
import { createWorld } from "../support/world";

// Client ID Metadata Documents through the real outbound guard: an address inside the network is refused before
// any connection, and a document that is too large or too slow is refused within the limits; nothing is cached.
// Through the consent form's route, the person chooses the URL: the fetches are limited per person and per host,
// and whatever went wrong is one sentence to them (the detail is in the log), so the page is no scanner.

vi.mock("@/lib/auth/sign-in/auth", async () => (await import("../support/signed-in")).signedInMock());

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
afterEach(() => {
  delete process.env.OUTBOUND_ALLOWED_HOSTS;
  vi.restoreAllMocks();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A plain HTTP listener on a loopback address of its own, counting the connections a fetch opens to it. */
async function target(): Promise<{ host: string; port: number; connections: () => number; close: () => void }> {
  const host = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
  const listener = http.createServer((_request, response) => response.end("{}"));
  let connections = 0;
  listener.on("connection", () => (connections += 1));
  await new Promise<void>((resolve) => listener.listen(0, host, resolve));
  return {
    host,
    port: (listener.address() as AddressInfo).port,
    connections: () => connections,
    close: () => {
      listener.closeAllConnections();
      listener.close();
    },
  };
}

/** The consent form's post for this client_id, by the signed-in person `userId`. */
function consent(clientId: string, user: { id: string; tenantId: string }) {
  signedIn.user = { ...user, email: "person", name: "Person", role: "AGENT", tenantName: "t" };
  const form = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: "http://127.0.0.1:33418/callback",
    code_challenge: "WrHlyGZTXKrfARMf6ggFndo_BRsga1GAB6KE6asQmhk",
    code_challenge_method: "S256",
    decision: "grant",
    scope_choice: "orders:read",
  });
  return postConsent(form);
}

const NEUTRAL =
  "This client cannot be used: its metadata document could not be fetched, or is not a valid client metadata document.";

describe("fetching a client's metadata document", () => {
  it("refuses a metadata URL that points at 127.0.0.1 or a name resolving to loopback, without connecting", async () => {
    const port = (server.address() as AddressInfo).port;
    for (const clientId of [`https://127.0.0.1:${port}/client.json`, `https://localhost:${port}/client.json`]) {
      const lookup = await resolveClient(clientId, fetchMetadataDocument, `u_${Math.random()}`);
      expect(lookup).toEqual({ ok: false, reason: expect.stringMatching(/could not be fetched/) });
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

describe("the consent form is no scanner", () => {
  it("says one sentence for a refused connection, a TLS failure and an internal address; the log says which", async () => {
    const world = await createWorld();
    const person = { id: world.users.agent, tenantId: world.tenantId };
    const open = await target();
    const closed = await target();
    closed.close();
    process.env.OUTBOUND_ALLOWED_HOSTS = `${open.host},${closed.host}`;
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const answers = [];
      for (const clientId of [
        `https://${closed.host}:${closed.port}/client.json`,
        `https://${open.host}:${open.port}/client.json`,
        "https://10.1.2.3/client.json",
      ]) {
        const answer = await consent(clientId, person);
        answers.push([answer.status, await answer.text()]);
      }
      expect(answers).toEqual(Array(3).fill([400, NEUTRAL]));
      const lines = logged.mock.calls.map(([line]) => String(line)).filter((line) => line.includes("oauth.metadata"));
      expect(lines).toEqual([
        expect.stringMatching(/"event":"oauth.metadata-document-refused".*ECONNREFUSED/),
        expect.stringMatching(/"event":"oauth.metadata-document-refused".*could not be fetched/),
        expect.stringMatching(/"event":"oauth.metadata-document-refused".*10\.1\.2\.3 is a loopback, private/),
      ]);
      expect(lines.every((line) => line.includes(world.users.agent))).toBe(true);
      expect(await db.oAuthGrant.count({ where: { agentId: world.users.agent } })).toBe(0);
    } finally {
      open.close();
    }
  });

  it(
    "limits a person's fetches a minute, and then fetches nothing for them, telling them to wait",
    async () => {
      const world = await createWorld();
      const person = { id: world.users.agent, tenantId: world.tenantId };
      const host = await target();
      process.env.OUTBOUND_ALLOWED_HOSTS = host.host;
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      try {
        await freshWindow();
        const url = (index: number) => `https://${host.host}:${host.port}/client-${index}.json`;
        for (let index = 0; index < METADATA_FETCH_LIMITS.perPerson; index++)
          expect(await (await consent(url(index), person)).text()).toBe(NEUTRAL);
        expect(host.connections()).toBe(METADATA_FETCH_LIMITS.perPerson);
        const limited = await consent(url(99), person);
        expect(limited.status).toBe(400);
        expect(await limited.text()).toMatch(
          /too many client metadata documents were fetched just now; try again in \d+ seconds/,
        );
        expect(host.connections()).toBe(METADATA_FETCH_LIMITS.perPerson);
        // Another person still may.
        expect(await (await consent(url(100), { id: world.users.agent2, tenantId: world.tenantId })).text()).toBe(
          NEUTRAL,
        );
        expect(host.connections()).toBe(METADATA_FETCH_LIMITS.perPerson + 1);
      } finally {
        host.close();
      }
    },
    FRESH_WINDOW_TIMEOUT_MS,
  );

  it(
    "limits the fetches to one host a minute, whoever asks",
    async () => {
      const world = await createWorld();
      const people = Object.values(world.users);
      const host = await target();
      process.env.OUTBOUND_ALLOWED_HOSTS = host.host;
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      try {
        await freshWindow();
        for (let index = 0; index < METADATA_FETCH_LIMITS.perHost; index++) {
          const person = { id: people[index % people.length], tenantId: world.tenantId };
          expect(await (await consent(`https://${host.host}:${host.port}/c-${index}.json`, person)).text()).toBe(
            NEUTRAL,
          );
        }
        expect(host.connections()).toBe(METADATA_FETCH_LIMITS.perHost);
        const stranger = { id: `user_${Math.random().toString(36).slice(2)}`, tenantId: world.tenantId };
        const limited = await consent(`https://${host.host}:${host.port}/other.json`, stranger);
        expect(await limited.text()).toMatch(/too many client metadata documents were fetched just now/);
        expect(host.connections()).toBe(METADATA_FETCH_LIMITS.perHost);
      } finally {
        host.close();
      }
    },
    FRESH_WINDOW_TIMEOUT_MS,
  );
});
