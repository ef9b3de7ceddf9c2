import * as oauth from "oauth4webapi";
import { db } from "../../../db";
import { logError } from "../../../observe/log";
import { startSession } from "../../sessions";
import { ATTEMPT_SECONDS, sealAttempt, type Attempt } from "./attempt";
import { bindSubject, type ProviderClaims, type SsoRefusal } from "../binding";
import { discover, IssuerRefused, requestOptions } from "../issuer";
import { openClientSecret } from "../settings";
import { combineClaims } from "./claims";
import { sessionCookie } from "./session-cookie";
import { findSsoByDomain, findSsoByTenant, insertSsoAudit, type SsoSettingsRow } from "../sql";

// Sign-in through a tenant's OpenID provider: the authorization code flow with PKCE (S256), `state` and `nonce`
// (oauth4webapi checks each), then the provider's subject bound to a toolgate person and a normal session started.

export const callbackPath = "/api/sso/callback";

/** The longest subject a provider may name (OpenID Connect Core 2). */
export const MAX_SUBJECT_LENGTH = 255;

export type SsoFailure =
  | SsoRefusal
  | "sso.email-mismatch"
  | "sso.not-configured"
  | "sso.no-attempt"
  | "sso.provider-refused"
  | "sso.invalid-response"
  | "sso.provider-unreachable";

export type Begun = { ok: true; location: string; attempt: string } | { ok: false; code: SsoFailure };

/** Which tenant's provider: the one of the email's domain, or the tenant named. */
export async function ssoSettingsFor(target: { email?: string; tenantId?: string }): Promise<SsoSettingsRow | null> {
  if (target.tenantId) return findSsoByTenant(db, target.tenantId);
  const domain = target.email?.split("@")[1]?.trim().toLowerCase();
  return domain ? findSsoByDomain(db, domain) : null;
}

/** Opens an attempt: where to send the browser, and the sealed attempt its cookie keeps. */
export async function beginSsoSignIn(
  target: { email?: string; tenantId?: string },
  origin: string,
  returnTo: string,
): Promise<Begun> {
  const settings = await ssoSettingsFor(target);
  if (!settings) return { ok: false, code: "sso.not-configured" };
  let server: oauth.AuthorizationServer;
  try {
    server = await discover(settings.issuer);
  } catch (error) {
    if (!(error instanceof IssuerRefused)) throw error;
    logError("sso.discovery", error, { tenantId: settings.tenantId });
    return { ok: false, code: "sso.provider-unreachable" };
  }
  const attempt: Attempt = {
    tenantId: settings.tenantId,
    issuer: settings.issuer,
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    verifier: oauth.generateRandomCodeVerifier(),
    returnTo,
    expiresAt: Date.now() + ATTEMPT_SECONDS * 1000,
  };
  const location = new URL(server.authorization_endpoint!);
  location.search = new URLSearchParams({
    client_id: settings.clientId,
    redirect_uri: new URL(callbackPath, origin).href,
    response_type: "code",
    scope: "openid email profile",
    state: attempt.state,
    nonce: attempt.nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(attempt.verifier),
    code_challenge_method: "S256",
    ...(target.email ? { login_hint: target.email } : {}),
  }).toString();
  return { ok: true, location: location.href, attempt: sealAttempt(attempt) };
}

export type Finished =
  { ok: true; cookie: string; returnTo: string; userId: string } | { ok: false; code: SsoFailure; tenantId?: string };

/**
 * Completes the attempt this browser started: the provider's answer must carry the attempt's `state`, the code is
 * exchanged with its PKCE verifier, the ID token must carry its `nonce`, and the subject must be bound (or bindable)
 * to an active person. Only then is a session started.
 */
export async function finishSsoSignIn(
  callbackUrl: URL,
  attempt: Attempt | null,
  origin: string,
  browser: { address: string; userAgent: string },
): Promise<Finished> {
  if (!attempt) return { ok: false, code: "sso.no-attempt" };
  const settings = await findSsoByTenant(db, attempt.tenantId);
  if (!settings || settings.issuer !== attempt.issuer) return { ok: false, code: "sso.not-configured" };
  const claims = await providerClaims(settings, attempt, callbackUrl, origin);
  if (typeof claims === "string") return refuse(settings, claims);
  const bound = await bindSubject(settings, claims);
  if (!bound.ok) return refuse(settings, bound.code, claims.sub);
  const { person } = bound;
  const sessionId = await startSession(person, browser, "sso");
  await insertSsoAudit(db, {
    tenantId: person.tenantId,
    actorId: person.id,
    action: "sso.signed-in",
    detail: { issuer: settings.issuer, subject: claims.sub, sessionId },
  });
  return {
    ok: true,
    cookie: await sessionCookie({ ...person, sessionId }),
    returnTo: attempt.returnTo,
    userId: person.id,
  };
}

async function refuse(settings: SsoSettingsRow, code: SsoFailure, subject?: string): Promise<Finished> {
  await insertSsoAudit(db, {
    tenantId: settings.tenantId,
    actorId: "(sso)",
    action: "sso.refused",
    detail: { issuer: settings.issuer, code, ...(subject ? { subject } : {}) },
  });
  return { ok: false, code, tenantId: settings.tenantId };
}

/** The ID token's claims, combined with the userinfo endpoint's for the same subject; or why the answer fails. */
async function providerClaims(
  settings: SsoSettingsRow,
  attempt: Attempt,
  callbackUrl: URL,
  origin: string,
): Promise<ProviderClaims | SsoFailure> {
  let server: oauth.AuthorizationServer;
  try {
    server = await discover(settings.issuer);
  } catch (error) {
    if (!(error instanceof IssuerRefused)) throw error;
    return "sso.provider-unreachable";
  }
  const client: oauth.Client = { client_id: settings.clientId };
  const options = requestOptions(new URL(settings.issuer));
  const auth = oauth.ClientSecretBasic(openClientSecret(settings));
  try {
    const parameters = oauth.validateAuthResponse(server, client, callbackUrl, attempt.state);
    const tokenResponse = await oauth.authorizationCodeGrantRequest(
      server,
      client,
      auth,
      parameters,
      new URL(callbackPath, origin).href,
      attempt.verifier,
      options,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(server, client, tokenResponse, {
      expectedNonce: attempt.nonce,
      requireIdToken: true,
    });
    const idToken = oauth.getValidatedIdTokenClaims(tokens)!;
    // OpenID Connect Core 2 bounds a subject at 255 ASCII characters: a longer one is the provider's fault, not ours.
    if (idToken.sub.length > MAX_SUBJECT_LENGTH) return "sso.invalid-response";
    if (!server.userinfo_endpoint) return combineClaims(idToken, null);
    const info = await oauth.processUserInfoResponse(
      server,
      client,
      idToken.sub,
      await oauth.userInfoRequest(server, client, tokens.access_token, options),
    );
    return combineClaims(idToken, info);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) return "sso.provider-refused";
    if (error instanceof oauth.ResponseBodyError && error.error === "invalid_grant") return "sso.provider-refused";
    // A state, nonce or signature that does not check out is refused and audited, not an operator's alarm.
    if (error instanceof oauth.OperationProcessingError) return "sso.invalid-response";
    logError("sso.callback", error, { tenantId: settings.tenantId });
    return "sso.invalid-response";
  }
}
