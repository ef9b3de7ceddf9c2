import type { ProviderClaims } from "../binding";

const normalized = (value: unknown) => (typeof value === "string" ? value.trim().toLowerCase() : value);

/**
 * The ID token's claims with the userinfo endpoint's, but `email` and `email_verified` from one source together: the
 * provider vouches for an address only in the answer that verifies it, so a verified ID-token address must never vouch
 * for another userinfo address. Userinfo's pair is taken when it carries both; a source that contradicts the other on
 * either claim is refused ("sso.email-mismatch").
 */
export function combineClaims(
  idToken: ProviderClaims,
  info: Record<string, unknown> | null,
): ProviderClaims | "sso.email-mismatch" {
  if (!info) return { ...idToken };
  const contradicts = (claim: "email" | "email_verified") =>
    idToken[claim] !== undefined && info[claim] !== undefined && normalized(idToken[claim]) !== normalized(info[claim]);
  if (contradicts("email") || contradicts("email_verified")) return "sso.email-mismatch";
  const source = info.email !== undefined && info.email_verified !== undefined ? info : idToken;
  return { ...idToken, ...info, sub: idToken.sub, email: source.email, email_verified: source.email_verified };
}
