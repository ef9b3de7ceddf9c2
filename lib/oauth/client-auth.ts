import { timingSafeEqual } from "node:crypto";
import { createLocalJWKSet, decodeJwt, errors, jwtVerify, type JSONWebKeySet } from "jose";
import { sha256Hex } from "../canonical";
import { db } from "../db";
import type { DocumentFetcher } from "./clients";
import { findClientCredentials, recordAssertion, type ClientCredentials } from "./sql";

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
export const JWKS_LIMITS = { maxBytes: 64 * 1024, timeoutMs: 5000 } as const;

export type ClientAuthentication =
  { ok: true; clientId: string } | { ok: false; status: 400 | 401; error: string; description: string };

const refused = (description: string): ClientAuthentication => ({
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
  return checkAssertion(assertion, clientId, credentials.jwksUri!, audiences, fetcher);
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
  const given = Buffer.from(sha256Hex(secret));
  const expected = Buffer.from(credentials.secretHash ?? "");
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? { ok: true, clientId }
    : refused("client_secret is not this client's");
}

async function fetchKeys(jwksUri: string, fetcher: DocumentFetcher): Promise<JSONWebKeySet | string> {
  const fetched = await fetcher(new URL(jwksUri), JWKS_LIMITS);
  if (!fetched.ok) return `its jwks_uri could not be fetched: ${fetched.reason}`;
  if (fetched.status !== 200) return `its jwks_uri answered ${fetched.status}`;
  try {
    const keys = JSON.parse(fetched.body) as JSONWebKeySet;
    return Array.isArray(keys?.keys) ? keys : "its jwks_uri holds no key set";
  } catch {
    return "its jwks_uri is not JSON";
  }
}

/**
 * RFC 7523 §3: signed by one of the client's keys, `iss` = `sub` = client_id, `aud` this token endpoint (or the
 * issuer), not expired and short-lived, and its `jti` not seen before (recorded until it expires).
 */
async function checkAssertion(
  assertion: string,
  clientId: string,
  jwksUri: string,
  audiences: string[],
  fetcher: DocumentFetcher,
): Promise<ClientAuthentication> {
  const keys = await fetchKeys(jwksUri, fetcher);
  if (typeof keys === "string") return refused(`the client's keys could not be read: ${keys}`);
  let payload;
  try {
    ({ payload } = await jwtVerify(assertion, createLocalJWKSet(keys), {
      issuer: clientId,
      subject: clientId,
      audience: audiences,
      algorithms: ASSERTION_ALGORITHMS,
      requiredClaims: ["exp", "jti"],
      clockTolerance: 30,
    }));
  } catch (error) {
    return refused(`client_assertion refused: ${assertionFault(error)}`);
  }
  if (payload.exp! - Math.floor(Date.now() / 1000) > MAX_ASSERTION_SECONDS)
    return refused(`client_assertion refused: it must expire within ${MAX_ASSERTION_SECONDS} seconds`);
  if (typeof payload.jti !== "string" || payload.jti.length > 200)
    return refused("client_assertion refused: its jti must be a string of at most 200 characters");
  const fresh = await recordAssertion(db, { clientId, jti: payload.jti, expiresAt: new Date(payload.exp! * 1000) });
  return fresh ? { ok: true, clientId } : refused("client_assertion refused: its jti was already used; sign a new one");
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
