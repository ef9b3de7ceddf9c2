import { RegistrationSchema } from "../../oauth/clients/clients";
import { OAUTH_PATHS } from "../../oauth/metadata";
import { TokenRequestSchema } from "../schemas";
import { jsonSchema, ref, json, oauthProblem, type Json } from "../parts";

// toolgate's authorization server in the OpenAPI document: metadata, registration, authorize and token.

const publicMetadata = (operationId: string, summary: string, schema: string) => ({
  get: {
    operationId,
    tags: ["OAuth"],
    summary,
    security: [],
    responses: {
      "200": {
        description: "cacheable for 300 s when the issuer is a setting, no-store when it is the request's host",
        content: json(ref(schema)),
      },
    },
  },
});

export function oauthPaths(): Json {
  return {
    "/.well-known/oauth-protected-resource": publicMetadata(
      "protectedResourceMetadata",
      "Protected Resource Metadata of /api/mcp (RFC 9728)",
      "ProtectedResourceMetadata",
    ),
    "/.well-known/oauth-protected-resource/api/mcp": publicMetadata(
      "protectedResourceMetadataOfMcp",
      "The same, at the path-suffixed address (RFC 9728 §3.1)",
      "ProtectedResourceMetadata",
    ),
    "/.well-known/oauth-authorization-server": publicMetadata(
      "authorizationServerMetadata",
      "Authorization Server Metadata (RFC 8414)",
      "AuthorizationServerMetadata",
    ),
    [OAUTH_PATHS.register]: {
      post: {
        operationId: "registerClient",
        tags: ["OAuth"],
        summary: "Dynamic Client Registration (RFC 7591)",
        description:
          "token_endpoint_auth_method none (public, PKCE) or client_secret_post; 10 registrations per address and 1,000 in all per hour. Such a client can be granted only in a tenant whose admin allows self-registered clients.",
        security: [],
        requestBody: { required: true, content: json(jsonSchema(RegistrationSchema, "input")) },
        responses: {
          "201": { description: "the registered client", content: json(ref("ClientRegistration")) },
          "400": oauthProblem("the metadata is not acceptable (the description names the fields)", [
            "invalid_client_metadata",
            "invalid_redirect_uri",
          ]),
          "429": oauthProblem("too many registrations from this address, or in all, this hour", ["too_many_requests"]),
        },
      },
    },
    [OAUTH_PATHS.token]: {
      post: {
        operationId: "token",
        tags: ["OAuth"],
        summary: "The token endpoint: authorization code with PKCE, or refresh",
        description:
          "Form-encoded, at most 8 KB. The client authenticates as it registered to (none, client_secret_post, private_key_jwt). Codes live 60 s and are single use; every refresh answers a new refresh token. Access tokens are accepted by /api/mcp only.",
        security: [],
        requestBody: {
          required: true,
          content: { "application/x-www-form-urlencoded": { schema: jsonSchema(TokenRequestSchema, "input") } },
        },
        responses: {
          "200": { description: "the tokens (Cache-Control: no-store)", content: json(ref("TokenResponse")) },
          "400": oauthProblem("the request cannot be granted (RFC 6749 §5.2)", [
            "invalid_request",
            "invalid_grant",
            "invalid_target",
            "unsupported_grant_type",
          ]),
          "401": oauthProblem("the client did not authenticate as it registered to; nothing was spent", [
            "invalid_client",
          ]),
        },
      },
    },
  };
}
