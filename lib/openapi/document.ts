import { z } from "zod";
import { SCOPE_WORDS } from "../oauth/consent/authorize-scopes";
import { OAUTH_PATHS } from "../oauth/metadata";
import {
  AuthorizationServerMetadataSchema,
  BatchOutcomeSchema,
  CallOutcomeSchema,
  ClientRegistrationSchema,
  ConversationSchema,
  ProtectedResourceMetadataSchema,
  TokenResponseSchema,
  ToolListSchema,
} from "./schemas";
import { ToolCallEnvelopeSchema, type Json } from "./parts";
import { agentPaths } from "./paths/agent";
import { mcpPaths } from "./paths/mcp";
import { oauthPaths } from "./paths/oauth";
import { operatorPaths } from "./paths/operator";

// The REST API as OpenAPI 3.1 (docs/SPEC.md section 6), served at GET /api/openapi.json. Every schema is generated
// by z.toJSONSchema from the zod schema the route enforces (requests) or the one its answers are tested against
// (./schemas.ts); the error codes are the SPEC's.

/** The named schemas, made in one pass so that a schema used inside another becomes a `$ref` to it. */
function componentSchemas(): Json {
  const registry = z.registry<{ id: string }>();
  const named: [string, z.ZodType][] = [
    ["Conversation", ConversationSchema],
    ["CallOutcome", CallOutcomeSchema],
    ["BatchOutcome", BatchOutcomeSchema],
    ["ToolList", ToolListSchema],
    ["ToolCallEnvelope", ToolCallEnvelopeSchema],
    ["ProtectedResourceMetadata", ProtectedResourceMetadataSchema],
    ["AuthorizationServerMetadata", AuthorizationServerMetadataSchema],
    ["ClientRegistration", ClientRegistrationSchema],
    ["TokenResponse", TokenResponseSchema],
  ];
  for (const [id, schema] of named) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io: "input", uri: (id) => `#/components/schemas/${id}` });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _dialect, $id: _id, ...rest } = schema as Json;
      return [id, rest];
    }),
  );
}

/** The whole document for clients of `issuer` (the OAuth issuer: this server's public origin). */
export function openApiDocument(issuer: string): Json {
  const metadata = `${issuer}/.well-known/oauth-authorization-server`;
  return {
    openapi: "3.1.0",
    info: {
      title: "toolgate",
      version: "1",
      summary: "The gateway between AI agents and a support team's consequential tools",
      description:
        "The agent-runtime API (docs/SPEC.md section 6): open a conversation, propose tool calls through the gateway, read and wait for their outcomes; the MCP endpoint; toolgate's OAuth authorization server for MCP clients.",
    },
    servers: [{ url: issuer }],
    tags: [
      { name: "Agent API", description: "For agent runtimes, with an agent's API key" },
      { name: "MCP", description: "The MCP endpoint, with an API key or an OAuth access token" },
      { name: "OAuth", description: `toolgate's authorization server (metadata: ${metadata})` },
      { name: "Decision log", description: "For a signed-in supervisor or admin" },
      { name: "Operations", description: "For load balancers, monitoring and client generators" },
    ],
    paths: { ...agentPaths(), ...mcpPaths(), ...oauthPaths(), ...operatorPaths() },
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        apiKey: {
          type: "http",
          scheme: "bearer",
          description:
            "An agent's API key, made on the admin page; a key belongs to one agent. A bad or revoked key gets 401.",
        },
        oauth: {
          type: "oauth2",
          description: `An OAuth 2.1 access token (a JWT for the resource ${issuer}/api/mcp, 300 s), accepted by /api/mcp only. Authorization code with PKCE (S256 only), state and iss; clients are Client ID Metadata Documents (an https client_id) or registered at ${OAUTH_PATHS.register}. Metadata: ${metadata} and ${issuer}/.well-known/oauth-protected-resource/api/mcp.`,
          flows: {
            authorizationCode: {
              authorizationUrl: `${issuer}${OAUTH_PATHS.authorize}`,
              tokenUrl: `${issuer}${OAUTH_PATHS.token}`,
              refreshUrl: `${issuer}${OAUTH_PATHS.token}`,
              scopes: SCOPE_WORDS,
            },
          },
        },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "__Host-next-auth.session-token",
          description:
            "A signed-in person's session (next-auth); over plain http the cookie is next-auth.session-token.",
        },
        metricsToken: { type: "http", scheme: "bearer", description: "METRICS_TOKEN (docs/DEPLOY.md)" },
      },
    },
  };
}
