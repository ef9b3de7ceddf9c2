import { z } from "zod";
import { servedOverHttps } from "../../../env";
import { decryptSecret, encryptSecret } from "../../../security/secrets";

// A sign-in in progress lives in one encrypted, HttpOnly cookie of the browser that started it: the state, nonce and
// PKCE verifier never leave this server readable, and a callback in another browser (a link someone was sent to
// sign them in as someone else) finds no attempt and is refused.

const CONTEXT = "sso-attempt";
export const ATTEMPT_SECONDS = 600;

export const attemptCookieName = () => (servedOverHttps() ? "__Host-toolgate.sso" : "toolgate.sso");

const AttemptSchema = z.strictObject({
  tenantId: z.string().min(1).max(100),
  issuer: z.string().min(1).max(500),
  state: z.string().min(1).max(200),
  nonce: z.string().min(1).max(200),
  verifier: z.string().min(43).max(128),
  returnTo: z.string().min(1).max(2000),
  expiresAt: z.number().int(),
});
export type Attempt = z.infer<typeof AttemptSchema>;

export function sealAttempt(attempt: Attempt): string {
  return encryptSecret(JSON.stringify(attempt), CONTEXT);
}

/** The attempt this browser started, or null when there is none, it does not open, or it is older than 10 minutes. */
export function openAttempt(sealed: string | undefined): Attempt | null {
  if (!sealed) return null;
  try {
    const attempt = AttemptSchema.parse(JSON.parse(decryptSecret(sealed, CONTEXT)));
    return attempt.expiresAt > Date.now() ? attempt : null;
  } catch {
    return null;
  }
}

export function attemptCookie(value: string, maxAge: number): string {
  const secure = servedOverHttps() ? "; Secure" : "";
  return `${attemptCookieName()}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;
}
