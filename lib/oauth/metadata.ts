import { issuerConfigured, mcpResourceOf } from "../auth/keys/access-tokens";
import { ALL_SCOPES } from "./consent/authorize-scopes";
import { ASSERTION_ALGORITHMS } from "./tokens/client-auth";
import { PUBLIC_CORS } from "./cors";

// Discovery documents (decision 017): the MCP endpoint's Protected Resource Metadata (RFC 9728) names this server
// as its authorization server, whose metadata (RFC 8414) says what it supports.

export const OAUTH_PATHS = {
  authorize: "/oauth/authorize",
  token: "/api/oauth/token",
  register: "/api/oauth/register",
} as const;

export function protectedResourceMetadata(issuer: string) {
  return {
    resource: mcpResourceOf(issuer),
    authorization_servers: [issuer],
    scopes_supported: ALL_SCOPES,
    bearer_methods_supported: ["header"],
    resource_name: "toolgate",
  };
}

export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${issuer}${OAUTH_PATHS.token}`,
    registration_endpoint: `${issuer}${OAUTH_PATHS.register}`,
    scopes_supported: ALL_SCOPES,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    token_endpoint_auth_methods_supported: ["none", "private_key_jwt", "client_secret_post"],
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGORITHMS,
    code_challenge_methods_supported: ["S256"],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

/**
 * Discovery answers are readable from a browser-based client, and cacheable for a while when the issuer is a
 * setting. An issuer taken from the request's Host is never stored by a cache: one request with a forged Host
 * would otherwise hand every later client of that cache the forger's endpoints.
 */
export const metadataHeaders = () =>
  ({ "Cache-Control": issuerConfigured() ? "public, max-age=300" : "no-store", ...PUBLIC_CORS }) as const;
