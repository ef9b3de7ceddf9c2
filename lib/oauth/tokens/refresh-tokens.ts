import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import { env } from "../../env";

// Refresh tokens rotate on every use (OAuth 2.1 §4.3.1). Hosted clients (Claude, ChatGPT) refresh from several
// workers at once, so the previous token keeps answering for a short grace window, with the pair its rotation
// issued: each successor is an HMAC of its predecessor under a key derived from NEXTAUTH_SECRET, so the server can
// give the same token again without ever storing one.

/**
 * The grace window: long enough for parallel refreshes and a retry after a lost answer (Amazon Cognito allows up to
 * 60 s for the same reason), short enough that a token stolen from a log is worth nothing a minute later.
 */
export const REFRESH_GRACE_SECONDS = 30;

function rotationKey(): Uint8Array {
  const secret = env().NEXTAUTH_SECRET;
  if (!secret) throw new Error("NEXTAUTH_SECRET must be set to issue OAuth refresh tokens");
  return new Uint8Array(hkdfSync("sha256", secret, "toolgate", "oauth refresh token", 32));
}

/** A new connection's first refresh token. */
export const firstRefreshToken = () => randomBytes(32).toString("base64url");

/** The refresh token that the rotation of `token` issues, the same every time it is asked for. */
export const successorOf = (token: string) => createHmac("sha256", rotationKey()).update(token).digest("base64url");
