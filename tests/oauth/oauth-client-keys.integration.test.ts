import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { KEY_SET_FETCH_LIMITS } from "@/lib/oauth/tokens/client-auth";
import { METADATA_FETCH_LIMITS, resolveClient, type DocumentFetcher } from "@/lib/oauth/clients/clients";
import { fetchMetadataDocument } from "@/lib/oauth/clients/fetch-document";
import { MCP_BASE } from "../support/mcp-route";
import { freshWindow, oauthRouteFetch, FRESH_WINDOW_TIMEOUT_MS } from "../support/oauth";

// A private_key_jwt client's key set at the token endpoint, which anyone may post to without a session: an
// assertion that is wrong on its face fetches nothing; the key set is kept per client as its cache headers say and
// fetched again only when stale or when an assertion names a key it lacks (a rotation); fetches are counted per
// client and per host; and whatever the fetch met (an internal address, a name that does not resolve, a 404) is one
// sentence to the caller, the detail in the log, so the token endpoint is no scanner.

const served = vi.hoisted(() => ({
  byUrl: new Map<string, { body: string; status?: number; maxAgeSeconds?: number }>(),
  asked: [] as string[],
}));
vi.mock("@/lib/oauth/clients/fetch-document", async (importOriginal) => {
  const real = await importOriginal<typeof import("@/lib/oauth/clients/fetch-document")>();
  return {
    // Documents and key sets this file serves; any other URL goes through the real outbound guard.
    fetchMetadataDocument: (async (url, limits) => {
      served.asked.push(url.href);
      const document = served.byUrl.get(url.href);
      return document === undefined
        ? real.fetchMetadataDocument(url, limits)
        : { ok: true, status: 200, contentType: "application/json", ...document };
    }) as DocumentFetcher,
  };
});

const TOKEN_ENDPOINT = `${MCP_BASE}/api/oauth/token`;
const NEUTRAL =
  "client_assertion refused: the client's key set could not be fetched from its jwks_uri or holds no key that verifies this assertion";

let signingKey: CryptoKey;
let otherKey: CryptoKey;
beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = "oauth-tests-signing-secret";
  signingKey = (await generateKeyPair("ES256")).privateKey;
  otherKey = (await generateKeyPair("ES256")).privateKey;
});
beforeEach(() => {
  served.asked = [];
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A new key pair's private key and the key set holding its public key as `kid`. */
async function keyPair(kid: string) {
  const pair = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(pair.publicKey)), kid, use: "sig", alg: "ES256" };
  return { privateKey: pair.privateKey, keySet: JSON.stringify({ keys: [jwk] }) };
}

/**
 * A private_key_jwt client whose document (on its own host) names `jwksUri`, stored as the authorize page stores
 * it; `keySet` is served there when given, else the URL goes to the real outbound guard.
 */
async function client(jwksUri: string, keySet?: string, answer: { status?: number; maxAgeSeconds?: number } = {}) {
  const clientId = `https://client-${crypto.randomUUID()}.example/oauth/client.json`;
  served.byUrl.set(clientId, {
    body: JSON.stringify({
      client_id: clientId,
      client_name: "Key set client",
      redirect_uris: ["https://client.example/callback"],
      token_endpoint_auth_method: "private_key_jwt",
      jwks_uri: jwksUri,
    }),
  });
  if (keySet !== undefined) served.byUrl.set(jwksUri, { body: keySet, ...answer });
  expect((await resolveClient(clientId, fetchMetadataDocument, `user_${crypto.randomUUID()}`)).ok).toBe(true);
  served.asked = served.asked.filter((url) => url !== clientId);
  return clientId;
}

function assertion(
  clientId: string,
  key: CryptoKey,
  kid: string,
  claims: { iss?: string; sub?: string; aud?: string; exp?: number; jti?: string | null } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(claims.jti === null ? {} : { jti: claims.jti ?? crypto.randomUUID() })
    .setProtectedHeader({ alg: "ES256", kid })
    .setIssuer(claims.iss ?? clientId)
    .setSubject(claims.sub ?? clientId)
    .setAudience(claims.aud ?? TOKEN_ENDPOINT)
    .setIssuedAt(now - 5)
    .setExpirationTime(claims.exp ?? now + 60);
  return jwt.sign(key);
}

/** A refresh with no session, as a scanner would post it: the refresh token is made up, the assertion is `given`. */
async function tokenRequest(clientId: string, given: string | Promise<string>) {
  const answer = await oauthRouteFetch(TOKEN_ENDPOINT, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: "made-up",
      client_id: clientId,
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: await given,
    }).toString(),
  });
  const body = (await answer.json()) as { error: string; error_description: string };
  return { status: answer.status, error: body.error, description: body.error_description };
}
/** The client authenticated; only the made-up refresh token was refused. */
const AUTHENTICATED = { status: 400, error: "invalid_grant", description: "unknown refresh token" };

const keySetCache = async (clientId: string) => {
  const [row] = await db.$queryRaw<{ jwks: { keys: { kid: string }[] } | null; jwksCacheUntil: Date | null }[]>`
    SELECT "jwks", "jwksCacheUntil" FROM "OAuthClient" WHERE "id" = ${clientId}`;
  return row;
};

describe("a private_key_jwt client's key set at the token endpoint", () => {
  it("refuses an assertion that is wrong on its face before fetching any key set, saying what was wrong", async () => {
    const jwksUri = `https://keys-${crypto.randomUUID()}.example/jwks.json`;
    const { privateKey, keySet } = await keyPair("k1");
    const clientId = await client(jwksUri, keySet);
    const now = Math.floor(Date.now() / 1000);
    for (const [given, fault] of [
      ["x", /not a valid signed JWT/],
      ["eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.", /alg must be one of/],
      [assertion(clientId, privateKey, "k1", { iss: "https://elsewhere.example/c.json" }), /iss and sub/],
      [assertion(clientId, privateKey, "k1", { sub: "someone" }), /iss and sub/],
      [assertion(clientId, privateKey, "k1", { aud: "https://elsewhere.example/token" }), /aud/],
      [assertion(clientId, privateKey, "k1", { exp: now - 120 }), /expired/],
      [assertion(clientId, privateKey, "k1", { exp: now + 3600 }), /within 600 seconds/],
      [assertion(clientId, privateKey, "k1", { jti: null }), /jti/],
    ] as [string | Promise<string>, RegExp][]) {
      const refused = await tokenRequest(clientId, given);
      expect(refused).toMatchObject({
        status: 401,
        error: "invalid_client",
        description: expect.stringMatching(fault),
      });
    }
    expect(served.asked).toEqual([]);
    expect(await db.rateBucket.count({ where: { key: `k:c:${clientId}` } })).toBe(0);
    expect(await keySetCache(clientId)).toEqual({ jwks: null, jwksCacheUntil: null });
  });

  it("fetches the key set once and verifies later assertions with the kept copy, for as long as its headers say", async () => {
    const jwksUri = `https://keys-${crypto.randomUUID()}.example/jwks.json`;
    const { privateKey, keySet } = await keyPair("k1");
    const clientId = await client(jwksUri, keySet, { maxAgeSeconds: 120 });
    for (let index = 0; index < 4; index++)
      expect(await tokenRequest(clientId, assertion(clientId, privateKey, "k1"))).toEqual(AUTHENTICATED);
    expect(served.asked).toEqual([jwksUri]);
    const kept = await keySetCache(clientId);
    expect(kept.jwks!.keys.map((key) => key.kid)).toEqual(["k1"]);
    expect(kept.jwksCacheUntil!.getTime() - Date.now()).toBeGreaterThan(100_000);
    expect(kept.jwksCacheUntil!.getTime() - Date.now()).toBeLessThanOrEqual(120_000);

    // A signature by another key under a known kid is refused with the kept set, fetching nothing.
    expect(await tokenRequest(clientId, assertion(clientId, otherKey, "k1"))).toEqual({
      status: 401,
      error: "invalid_client",
      description: NEUTRAL,
    });
    expect(served.asked).toEqual([jwksUri]);

    // Once the kept copy is stale, the next assertion fetches it again, once.
    await db.$executeRaw`UPDATE "OAuthClient" SET "jwksCacheUntil" = now() - interval '1 second' WHERE "id" = ${clientId}`;
    for (let index = 0; index < 2; index++)
      expect(await tokenRequest(clientId, assertion(clientId, privateKey, "k1"))).toEqual(AUTHENTICATED);
    expect(served.asked).toEqual([jwksUri, jwksUri]);
  });

  it("fetches a rotated key once when an assertion names a kid the kept set lacks, and verifies with it", async () => {
    const jwksUri = `https://keys-${crypto.randomUUID()}.example/jwks.json`;
    const first = await keyPair("k1");
    const clientId = await client(jwksUri, first.keySet);
    expect(await tokenRequest(clientId, assertion(clientId, first.privateKey, "k1"))).toEqual(AUTHENTICATED);
    expect(served.asked).toEqual([jwksUri]);

    const rotated = await keyPair("k2");
    served.byUrl.set(jwksUri, { body: rotated.keySet });
    for (let index = 0; index < 3; index++)
      expect(await tokenRequest(clientId, assertion(clientId, rotated.privateKey, "k2"))).toEqual(AUTHENTICATED);
    expect(served.asked).toEqual([jwksUri, jwksUri]);
    expect((await keySetCache(clientId)).jwks!.keys.map((key) => key.kid)).toEqual(["k2"]);

    // The retired key is no longer in the set: one fetch to look, then a refusal in the one sentence.
    expect(await tokenRequest(clientId, assertion(clientId, first.privateKey, "k1"))).toMatchObject({
      status: 401,
      description: NEUTRAL,
    });
    expect(served.asked).toEqual([jwksUri, jwksUri, jwksUri]);
  });

  it(
    "a stranger naming keys the kept set lacks fetches from a budget of its own: the client's keys still work",
    async () => {
      await freshWindow();
      const jwksUri = `https://keys-${crypto.randomUUID()}.example/jwks.json`;
      const first = await keyPair("k1");
      const clientId = await client(jwksUri, first.keySet);
      expect(await tokenRequest(clientId, assertion(clientId, first.privateKey, "k1"))).toEqual(AUTHENTICATED);
      // The client publishes its next key beside the first, as a rotation does before signing with it.
      const next = await keyPair("k2");
      const both = { keys: [...JSON.parse(first.keySet).keys, ...JSON.parse(next.keySet).keys] };
      served.byUrl.set(jwksUri, { body: JSON.stringify(both) });
      served.asked = [];
      // Anyone can post assertions naming made-up keys, signed by any key, before a signature is checked.
      for (let index = 0; index < 10; index++)
        expect(await tokenRequest(clientId, assertion(clientId, otherKey, `made-up-${index}`))).toMatchObject({
          status: 401,
        });
      expect(served.asked).toHaveLength(KEY_SET_FETCH_LIMITS.unknownKey);
      // Its fetches took in the published key, and its burst used none of the client's own fetches.
      expect(await tokenRequest(clientId, assertion(clientId, next.privateKey, "k2"))).toEqual(AUTHENTICATED);
      await db.$executeRaw`UPDATE "OAuthClient" SET "jwksCacheUntil" = now() - interval '1 second' WHERE "id" = ${clientId}`;
      expect(await tokenRequest(clientId, assertion(clientId, first.privateKey, "k1"))).toEqual(AUTHENTICATED);
      expect(served.asked).toHaveLength(KEY_SET_FETCH_LIMITS.unknownKey + 1);
    },
    FRESH_WINDOW_TIMEOUT_MS,
  );

  it("says one sentence whatever the fetch met (internal address, loopback name, no such name, 404, not a key set); the log says which", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const notKeys = `https://keys-${crypto.randomUUID()}.example/jwks.json`;
    const targets = [
      "https://10.1.2.3/jwks.json",
      "https://localhost/jwks.json",
      "https://nonexistent.invalid/jwks.json",
      `https://keys-${crypto.randomUUID()}.example/missing.json`,
      notKeys,
    ];
    const clients = [
      await client(targets[0]),
      await client(targets[1]),
      await client(targets[2]),
      await client(targets[3], "not found", { status: 404 }),
      await client(targets[4], JSON.stringify({ keys: "none" })),
    ];
    const answers = [];
    for (const clientId of clients) answers.push(await tokenRequest(clientId, assertion(clientId, signingKey, "k1")));
    expect(answers).toEqual(Array(targets.length).fill({ status: 401, error: "invalid_client", description: NEUTRAL }));
    const lines = logged.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.includes("oauth.client-keys-refused"));
    expect(lines).toEqual([
      expect.stringMatching(/10\.1\.2\.3 is a loopback, private/),
      expect.stringMatching(/localhost.*loopback/),
      expect.stringMatching(/nonexistent\.invalid does not resolve/),
      expect.stringMatching(/answered 404/),
      expect.stringMatching(/holds no key set/),
    ]);
    for (const clientId of clients) expect(lines.some((line) => line.includes(clientId))).toBe(true);
  });

  it(
    "limits key set fetches a minute per client and per host, and then fetches nothing, telling the client to wait",
    async () => {
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      await freshWindow();
      // A key set that is never one (so never kept): every request would fetch again.
      const oneHost = `keys-${crypto.randomUUID()}.example`;
      const keySet = JSON.stringify({ keys: "none" });
      const clientId = await client(`https://${oneHost}/a.json`, keySet);
      for (let index = 0; index < KEY_SET_FETCH_LIMITS.perClient; index++)
        expect(await tokenRequest(clientId, assertion(clientId, signingKey, `k${index}`))).toMatchObject({
          description: NEUTRAL,
        });
      expect(served.asked).toHaveLength(KEY_SET_FETCH_LIMITS.perClient);
      const limited = await tokenRequest(clientId, assertion(clientId, signingKey, "k99"));
      expect(limited).toMatchObject({ status: 401, error: "invalid_client" });
      expect(limited.description).toMatch(/fetched too often just now; try again in \d+ seconds/);
      expect(served.asked).toHaveLength(KEY_SET_FETCH_LIMITS.perClient);

      // Metadata documents fetched from the host up to their limit (a stranger can cause those) take nothing from the
      // key sets' own bucket; other clients whose key sets are on the host fill that one, where the refused attempt
      // counted too.
      const thisMinute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
      await db.rateBucket.upsert({
        where: { key: `m:h:${oneHost}` },
        create: { key: `m:h:${oneHost}`, windowStart: thisMinute, count: METADATA_FETCH_LIMITS.perHost },
        update: { windowStart: thisMinute, count: METADATA_FETCH_LIMITS.perHost },
      });
      const fetchesLeft = KEY_SET_FETCH_LIMITS.perHost - KEY_SET_FETCH_LIMITS.perClient - 1;
      const others = [];
      for (let index = 0; index * KEY_SET_FETCH_LIMITS.perClient < fetchesLeft; index++)
        others.push(await client(`https://${oneHost}/${index}.json`, keySet));
      for (let fetch = 0; fetch < fetchesLeft; fetch++) {
        const other = others[Math.floor(fetch / KEY_SET_FETCH_LIMITS.perClient)];
        expect(await tokenRequest(other, assertion(other, signingKey, `k${fetch}`))).toMatchObject({
          description: NEUTRAL,
        });
      }
      expect(served.asked).toHaveLength(KEY_SET_FETCH_LIMITS.perHost - 1);
      const last = await client(`https://${oneHost}/last.json`, keySet);
      expect((await tokenRequest(last, assertion(last, signingKey, "k1"))).description).toMatch(/fetched too often/);
      expect(served.asked).toHaveLength(KEY_SET_FETCH_LIMITS.perHost - 1);
    },
    FRESH_WINDOW_TIMEOUT_MS,
  );
});
