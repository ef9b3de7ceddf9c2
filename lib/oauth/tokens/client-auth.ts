import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JSONWebKeySet } from "jose";
import { z } from "zod";
import { sha256Hex } from "../../canonical";
import { db } from "../../db";
import { logInfo } from "../../observe/log";
import { sameSecret } from "../../security/equal";
import { CACHE_SECONDS, type DocumentFetcher } from "../clients/clients";
import {
  countKeySetFetch,
  findClientCredentials,
  recordAssertion,
  saveClientKeySet,
  type ClientCredentials,
} from "./sql";

// Client authentication at the token endpoint: a public client proves nothing beyond PKCE; a client whose metadata
// document names private_key_jwt signs an assertion (RFC 7523 §3) with a key at its jwks_uri; a client registered
// with client_secret_post sends the secret it was given. Which one is the client's own stored choice, never the
// request's, so a stolen code cannot be redeemed by leaving the assertion out.

export const JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** Asymmetric algorithms only: an HMAC "signed" with the public key, or `none`, proves nothing. */
export const ASSERTION_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];
/** An assertion is meant for one request: one valid for longer than this is refused. */
const MAX_ASSERTION_SECONDS = 600;
const CLOCK_TOLERANCE_SECONDS = 30;
export const JWKS_LIMITS = { maxBytes: 64 * 1024, timeoutMs: 5000 } as const;
/**
 * Key set fetches a minute per client and per host (a bucket apart from the metadata documents', so neither can use
 * up the other's). Anyone may post to the token endpoint, so without a limit it would make this server fetch a
 * client's jwks_uri as often as asked.
 */
export const KEY_SET_FETCH_LIMITS = { perClient: 5, perHost: 30, unknownKey: 2 } as const;
/** What the caller is told when the key set could not be had or did not verify: the detail is for the log only. */
const UNVERIFIED_ASSERTION =
  "client_assertion refused: the client's key set could not be fetched from its jwks_uri or holds no key that verifies this assertion";
const KeySetSchema = z.object({
  keys: z.array(z.looseObject({ kty: z.string(), kid: z.string().optional() })).max(100),
});

type Refusal = { ok: false; status: 400 | 401; error: string; description: string };
export type ClientAuthentication = { ok: true; clientId: string } | Refusal;

const refused = (description: string): Refusal => ({
  ok: false,
  status: 401,
  error: "invalid_client",
  description,
});

/**
 * The client the request names (`client_id`, or an assertion's issuer), authenticated as it registered to be.
 * `audiences`: what an assertion's `aud` may be (this token endpoint, or the issuer).
 */
export async function authenticateClient(
  form: URLSearchParams,
  audiences: string[],
  fetcher: DocumentFetcher,
): Promise<ClientAuthentication> {
  const assertion = form.get("client_assertion");
  const clientId = form.get("client_id") ?? (assertion ? unverifiedIssuer(assertion) : undefined);
  if (!clientId) return refused("client_id is required");
  const credentials = await findClientCredentials(db, clientId);
  // An unknown client_id goes on as a public client: the code or refresh token it presents then names no grant of it.
  if (!credentials || credentials.authMethod === "none") return { ok: true, clientId };
  if (credentials.authMethod === "client_secret_post") return checkSecret(form, clientId, credentials);
  if (form.get("client_assertion_type") !== JWT_BEARER_ASSERTION || !assertion)
    return refused(
      `this client authenticates with private_key_jwt: send client_assertion_type=${JWT_BEARER_ASSERTION} and a client_assertion signed with a key at its jwks_uri`,
    );
  return checkAssertion(assertion, clientId, credentials, audiences, fetcher);
}

function unverifiedIssuer(assertion: string): string | undefined {
  try {
    return decodeJwt(assertion).iss;
  } catch {
    return undefined;
  }
}

function checkSecret(form: URLSearchParams, clientId: string, credentials: ClientCredentials): ClientAuthentication {
  const secret = form.get("client_secret");
  if (!secret) return refused("this client authenticates with client_secret_post: send client_secret in the body");
  return sameSecret(sha256Hex(secret), credentials.secretHash ?? "")
    ? { ok: true, clientId }
    : refused("client_secret is not this client's");
}

/**
 * Why an assertion is refused on what it says of itself, or null: checked before any key is fetched, so that a
 * request with a made-up assertion makes this server fetch nothing (RFC 7523 §3; the signature comes after).
 */
function unverifiedFault(assertion: string, clientId: string, audiences: string[]): string | null {
  let header, payload;
  try {
    header = decodeProtectedHeader(assertion);
    payload = decodeJwt(assertion);
  } catch {
    return "it is not a valid signed JWT";
  }
  if (!ASSERTION_ALGORITHMS.includes(header.alg ?? ""))
    return `its alg must be one of ${ASSERTION_ALGORITHMS.join(", ")}`;
  if (payload.iss !== clientId || payload.sub !== clientId) return "its iss and sub must both be the client_id";
  const audience: string[] = typeof payload.aud === "string" ? [payload.aud] : (payload.aud ?? []);
  if (!audience.some((aud) => audiences.includes(aud))) return "its aud must be this server's token endpoint or issuer";
  const now = Math.floor(Date.now() / 1000);
  if (typeof payload.exp !== "number") return "it must have an exp claim";
  if (payload.exp <= now - CLOCK_TOLERANCE_SECONDS) return "it has expired";
  if (payload.exp - now > MAX_ASSERTION_SECONDS) return `it must expire within ${MAX_ASSERTION_SECONDS} seconds`;
  if (typeof payload.nbf === "number" && payload.nbf > now + CLOCK_TOLERANCE_SECONDS) return "its nbf is in the future";
  if (typeof payload.jti !== "string" || payload.jti.length === 0 || payload.jti.length > 200)
    return "its jti must be a string of 1 to 200 characters";
  return null;
}

/**
 * RFC 7523 §3: `iss` = `sub` = client_id, `aud` this token endpoint (or the issuer), not expired and short-lived, a
 * `jti` (all checked before any fetch), signed by one of the client's keys, and its `jti` not seen before (recorded
 * until it expires). Whatever went wrong with the key set is one sentence to the caller; the detail is logged.
 */
async function checkAssertion(
  assertion: string,
  clientId: string,
  credentials: ClientCredentials,
  audiences: string[],
  fetcher: DocumentFetcher,
): Promise<ClientAuthentication> {
  const fault = unverifiedFault(assertion, clientId, audiences);
  if (fault) return refused(`client_assertion refused: ${fault}`);
  const keys = await clientKeys(clientId, credentials, decodeProtectedHeader(assertion).kid, fetcher);
  if (!keys.ok) return keys;
  let payload;
  try {
    ({ payload } = await jwtVerify(assertion, createLocalJWKSet(keys.keySet), {
      issuer: clientId,
      subject: clientId,
      audience: audiences,
      algorithms: ASSERTION_ALGORITHMS,
      requiredClaims: ["exp", "jti"],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    }));
  } catch (error) {
    logInfo("oauth.client-keys-refused", { clientId, reason: assertionFault(error) });
    return refused(UNVERIFIED_ASSERTION);
  }
  const fresh = await recordAssertion(db, {
    clientId,
    jti: payload.jti!,
    expiresAt: new Date(payload.exp! * 1000),
  });
  return fresh ? { ok: true, clientId } : refused("client_assertion refused: its jti was already used; sign a new one");
}

/**
 * The client's key set: the one kept from its last fetch while it is fresh and holds the key the assertion names
 * (`kid`); else fetched once (a stale set, or a rotated key), counted per client and per host before it is made.
 * Anyone can send an assertion naming a key the kept set lacks, before any signature is checked, so those fetches
 * count in a small bucket of their own and never use up the client's: a stranger's burst cannot stop a stale set
 * from being fetched, and each of its fetches takes in whatever key the client has published since.
 */
async function clientKeys(
  clientId: string,
  credentials: ClientCredentials,
  kid: string | undefined,
  fetcher: DocumentFetcher,
): Promise<{ ok: true; keySet: JSONWebKeySet } | Refusal> {
  const kept = KeySetSchema.safeParse(credentials.jwks);
  const fresh =
    kept.success && credentials.jwksCacheUntil !== null && Date.now() < credentials.jwksCacheUntil.getTime();
  if (fresh && (kid === undefined || kept.data.keys.some((key) => key.kid === kid)))
    return { ok: true, keySet: kept.data as JSONWebKeySet };
  const jwksUri = new URL(credentials.jwksUri!);
  const counted = await countKeySetFetch(db, { clientId, host: jwksUri.hostname, unknownKey: fresh });
  const over = counted.find((row) => row.count > KEY_SET_FETCH_LIMITS[bucketOf(row.key)]);
  if (over) {
    logInfo("oauth.client-keys-fetch-limited", { clientId, bucket: over.key });
    return refused(
      `the client's key set was fetched too often just now; try again in ${Math.max(1, over.retryAfter)} seconds`,
    );
  }
  const fetched = readKeySet(await fetcher(jwksUri, JWKS_LIMITS));
  if (!fetched.ok) {
    logInfo("oauth.client-keys-refused", { clientId, reason: fetched.reason });
    return refused(UNVERIFIED_ASSERTION);
  }
  const keep = Math.min(CACHE_SECONDS.max, Math.max(CACHE_SECONDS.min, fetched.maxAgeSeconds ?? CACHE_SECONDS.unsaid));
  await saveClientKeySet(db, {
    clientId,
    jwksUri: credentials.jwksUri!,
    jwks: fetched.keySet,
    cacheUntil: new Date(Date.now() + keep * 1000),
  });
  return { ok: true, keySet: fetched.keySet };
}

const bucketOf = (key: string) =>
  key.startsWith("k:c:") ? "perClient" : key.startsWith("k:u:") ? "unknownKey" : "perHost";

/** The key set a `jwks_uri` answered, or why it is none (for the log only: it can say what a scan wants). */
function readKeySet(
  fetched: Awaited<ReturnType<DocumentFetcher>>,
): { ok: true; keySet: JSONWebKeySet; maxAgeSeconds?: number } | { ok: false; reason: string } {
  if (!fetched.ok) return { ok: false, reason: `its jwks_uri could not be fetched: ${fetched.reason}` };
  if (fetched.status !== 200) return { ok: false, reason: `its jwks_uri answered ${fetched.status}` };
  let json: unknown;
  try {
    json = JSON.parse(fetched.body);
  } catch {
    return { ok: false, reason: "its jwks_uri is not JSON" };
  }
  const keySet = KeySetSchema.safeParse(json);
  return keySet.success
    ? { ok: true, keySet: keySet.data as JSONWebKeySet, maxAgeSeconds: fetched.maxAgeSeconds }
    : { ok: false, reason: "its jwks_uri holds no key set" };
}

function assertionFault(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "it has expired";
  if (error instanceof errors.JWTClaimValidationFailed)
    return error.claim === "aud"
      ? "its aud must be this server's token endpoint or issuer"
      : `its ${error.claim} claim is missing or wrong (iss and sub must be the client_id)`;
  if (error instanceof errors.JWKSNoMatchingKey) return "no key at the client's jwks_uri matches it";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "its signature does not verify";
  if (error instanceof errors.JOSEAlgNotAllowed) return `its alg must be one of ${ASSERTION_ALGORITHMS.join(", ")}`;
  if (error instanceof errors.JOSEError) return "it is not a valid signed JWT";
  throw error;
}
