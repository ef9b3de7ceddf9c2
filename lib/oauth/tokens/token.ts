import { calculatePKCECodeChallenge } from "oauth4webapi";
import { ACCESS_TOKEN_SECONDS, mcpResourceOf, signAccessToken } from "../../auth/keys/access-tokens";
import { appendAuditLog } from "../../audit/sql";
import { sha256Hex } from "../../canonical";
import { transaction, type Tx } from "../../db";
import { sameSecret } from "../../security/equal";
import { authenticateClient } from "./client-auth";
import type { DocumentFetcher } from "../clients/clients";
import { OAUTH_PATHS } from "../metadata";
import { firstRefreshToken, REFRESH_GRACE_SECONDS, successorOf } from "./refresh-tokens";
import {
  findUnusedRefreshToken,
  insertRefreshToken,
  lockCode,
  lockRefreshToken,
  markCodeUsed,
  markRefreshTokenUsed,
  type GrantRow,
} from "./sql";
import { revokeGrant } from "../consent/sql";

// The token endpoint (OAuth 2.1 §3.2): the client authenticated as it registered to be (client-auth.ts), then an
// authorization code with its PKCE verifier, or a refresh token, for an access token to this server's MCP resource
// and a new refresh token. A code or refresh token presented a second time is taken as stolen: the whole connection
// (its grant, key row and every token) is revoked; except a refresh token presented again within the grace window of
// its rotation (refresh-tokens.ts), which gets the pair that rotation issued.

export type TokenResult =
  { ok: true; body: Record<string, unknown> } | { ok: false; status: 400 | 401; error: string; description: string };

const refused = (error: string, description: string): TokenResult => ({ ok: false, status: 400, error, description });

// RFC 7636 §4.1: 43 to 128 unreserved characters.
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

async function pkceMatches(verifier: string, challenge: string): Promise<boolean> {
  return sameSecret(await calculatePKCECodeChallenge(verifier), challenge);
}

async function issueTokens(
  tx: Tx,
  issuer: string,
  grant: GrantRow,
  refreshToken: string,
): Promise<Record<string, unknown>> {
  await insertRefreshToken(tx, { hash: sha256Hex(refreshToken), grantId: grant.id });
  return tokenPair(issuer, grant, refreshToken);
}

async function tokenPair(issuer: string, grant: GrantRow, refreshToken: string): Promise<Record<string, unknown>> {
  const accessToken = await signAccessToken(issuer, {
    sub: grant.agentId,
    tid: grant.tenantId,
    key: grant.apiKeyId,
    gid: grant.id,
    client_id: grant.clientId,
    scope: grant.scopes.join(" "),
  });
  return {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: ACCESS_TOKEN_SECONDS,
    refresh_token: refreshToken,
    scope: grant.scopes.join(" "),
  };
}

async function revokeFamily(tx: Tx, grant: GrantRow, reason: string): Promise<void> {
  const revoked = await revokeGrant(tx, grant.tenantId, grant.id, reason);
  if (revoked)
    await appendAuditLog(tx, {
      tenantId: grant.tenantId,
      actorId: grant.agentId,
      action: "oauth.revoked",
      detail: { grantId: grant.id, clientId: grant.clientId, reason },
    });
}

const field = (form: URLSearchParams, name: string) => form.get(name) ?? undefined;

export async function exchangeToken(
  form: URLSearchParams,
  issuer: string,
  fetcher: DocumentFetcher,
): Promise<TokenResult> {
  const grantType = field(form, "grant_type");
  const resource = field(form, "resource");
  if (resource !== undefined && resource !== mcpResourceOf(issuer))
    return refused("invalid_target", `this server issues tokens only for ${mcpResourceOf(issuer)}`);
  if (grantType !== "authorization_code" && grantType !== "refresh_token")
    return refused("unsupported_grant_type", "only authorization_code (with PKCE) and refresh_token are supported");
  const client = await authenticateClient(form, [`${issuer}${OAUTH_PATHS.token}`, issuer], fetcher);
  if (!client.ok) return client;
  return grantType === "authorization_code"
    ? exchangeCode(form, issuer, client.clientId)
    : refresh(form, issuer, client.clientId);
}

async function exchangeCode(form: URLSearchParams, issuer: string, clientId: string): Promise<TokenResult> {
  const code = field(form, "code");
  const verifier = field(form, "code_verifier");
  const redirectUri = field(form, "redirect_uri");
  if (!code || code.length > 200) return refused("invalid_request", "code is required");
  if (!verifier) return refused("invalid_request", "code_verifier is required (PKCE)");
  return transaction(async (tx) => {
    const hash = sha256Hex(code);
    const row = await lockCode(tx, hash);
    if (!row || row.clientId !== clientId) return refused("invalid_grant", "unknown authorization code");
    if (row.used) {
      await revokeFamily(tx, row, "code-replayed");
      return refused("invalid_grant", "this authorization code was already used; its connection is revoked");
    }
    if (row.expired) return refused("invalid_grant", "the authorization code expired; authorize again");
    if (!row.live) return refused("invalid_grant", "this connection was revoked; authorize again");
    if (redirectUri !== row.redirectUri)
      return refused("invalid_grant", "redirect_uri must be the one the code was issued for");
    if (!VERIFIER.test(verifier) || !(await pkceMatches(verifier, row.codeChallenge)))
      return refused("invalid_grant", "code_verifier does not match the code_challenge");
    await markCodeUsed(tx, hash);
    return { ok: true, body: await issueTokens(tx, issuer, row, firstRefreshToken()) };
  });
}

async function refresh(form: URLSearchParams, issuer: string, clientId: string): Promise<TokenResult> {
  const token = field(form, "refresh_token");
  if (!token || token.length > 200) return refused("invalid_request", "refresh_token is required");
  return transaction(async (tx) => {
    const hash = sha256Hex(token);
    const row = await lockRefreshToken(tx, hash, REFRESH_GRACE_SECONDS);
    if (!row || row.clientId !== clientId) return refused("invalid_grant", "unknown refresh token");
    const successor = successorOf(token);
    if (row.used) {
      // A parallel refresh (or a retry after a lost answer) gets the pair the rotation issued, while that pair is
      // still the current one; the window counts from the rotation, so presenting the token again never extends it.
      if (row.inGrace && row.live && (await findUnusedRefreshToken(tx, sha256Hex(successor), row.id)))
        return { ok: true, body: await tokenPair(issuer, row, successor) };
      await revokeFamily(tx, row, "refresh-token-reused");
      return refused("invalid_grant", "this refresh token was already used; its connection is revoked");
    }
    if (!row.live) return refused("invalid_grant", "this connection was revoked; authorize again");
    if (row.lapsed) {
      await revokeFamily(tx, row, "lapsed");
      return refused("invalid_grant", "this connection went unused too long or reached its lifetime; authorize again");
    }
    await markRefreshTokenUsed(tx, hash);
    return { ok: true, body: await issueTokens(tx, issuer, row, successor) };
  });
}
