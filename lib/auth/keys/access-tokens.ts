import { hkdfSync } from "node:crypto";
import { errors, jwtVerify, SignJWT } from "jose";
import { env } from "../../env";
import { newId } from "../../ids";

// OAuth access tokens for /api/mcp (decision 017): JWTs signed and verified by `jose`, under a key derived from
// NEXTAUTH_SECRET so every instance of a deployment verifies every other's. The token names the connection's key
// row; the route still looks that row up on every call, so a revoked connection ends at once.

export const ACCESS_TOKEN_SECONDS = 300;
const ALGORITHM = "HS256";
const TYPE = "at+jwt";
const KEY_ID = "tg-oauth-1";

export interface AccessTokenClaims {
  /** The agent (user id). */
  sub: string;
  tid: string;
  /** The ApiKey row that backs the connection. */
  key: string;
  /** The connection (OAuthGrant id). */
  gid: string;
  client_id: string;
  scope: string;
}

function signingKey(): Uint8Array {
  const secret = env().NEXTAUTH_SECRET;
  if (!secret) throw new Error("NEXTAUTH_SECRET must be set to issue or verify OAuth access tokens");
  return new Uint8Array(hkdfSync("sha256", secret, "toolgate", "oauth access token", 32));
}

/** Whether the issuer is a setting (OAUTH_ISSUER or NEXTAUTH_URL) rather than the request's Host header. */
export const issuerConfigured = (): boolean => Boolean(env().OAUTH_ISSUER ?? env().NEXTAUTH_URL);

/**
 * The issuer's origin: OAUTH_ISSUER, else NEXTAUTH_URL's origin, else the request's own Host (development only: a
 * production start without NEXTAUTH_URL is refused, see `startupProblems`).
 */
export function issuerFor(host: string | null): string {
  const configured = env().OAUTH_ISSUER ?? env().NEXTAUTH_URL;
  if (configured) return new URL(configured).origin;
  return `http://${host ?? "localhost"}`;
}

export const issuerOf = (request: Request): string =>
  issuerFor(request.headers.get("host") ?? new URL(request.url).host);

/** The one resource the tokens are for (RFC 8707): this server's MCP endpoint. */
export const mcpResourceOf = (issuer: string) => `${issuer}/api/mcp`;

export async function signAccessToken(issuer: string, claims: AccessTokenClaims): Promise<string> {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: ALGORITHM, typ: TYPE, kid: KEY_ID })
    .setIssuer(issuer)
    .setAudience(mcpResourceOf(issuer))
    .setIssuedAt()
    .setJti(newId("at"))
    .setExpirationTime(`${ACCESS_TOKEN_SECONDS}s`)
    .sign(signingKey());
}

/** Whether a bearer value has the shape of a JWT (an API key has no dots). */
export const looksLikeJwt = (bearer: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(bearer);

/**
 * The claims of a valid access token for this issuer's MCP resource; null for a bad signature (another key),
 * another issuer or audience, an expired token, another type or algorithm, or missing claims.
 */
export async function verifyAccessToken(issuer: string, token: string): Promise<AccessTokenClaims | null> {
  try {
    const { payload } = await jwtVerify(token, signingKey(), {
      issuer,
      audience: mcpResourceOf(issuer),
      algorithms: [ALGORITHM],
      typ: TYPE,
      requiredClaims: ["exp", "sub", "jti"],
    });
    const { sub, tid, key, gid, client_id: clientId, scope } = payload;
    const strings = [sub, tid, key, gid, clientId, scope];
    if (!strings.every((value) => typeof value === "string")) return null;
    return payload as unknown as AccessTokenClaims;
  } catch (error) {
    if (error instanceof errors.JOSEError) return null;
    throw error;
  }
}
