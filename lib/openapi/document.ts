import { z } from "zod";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { FORMATS } from "../agent-api/adapters/adapt";
import { MAX_WAIT_SECONDS } from "../agent-api/tool-calls";
import { ExportQuerySchema } from "../audit/export";
import { OpenConversationSchema } from "../conversations/open";
import { MAX_DEPTH, MAX_ENVELOPE_BYTES } from "../gateway";
import { SCOPE_WORDS } from "../oauth/consent/authorize-scopes";
import { RegistrationSchema } from "../oauth/clients/clients";
import { OAUTH_PATHS } from "../oauth/metadata";
import { DEFINITION_FORMATS, exposedTools, TOOL_NAMES } from "../tools/registry";
import {
  AuthorizationServerMetadataSchema,
  BatchOutcomeSchema,
  CallOutcomeSchema,
  ClientRegistrationSchema,
  ConversationSchema,
  errorBodySchema,
  HealthSchema,
  oauthErrorSchema,
  ProtectedResourceMetadataSchema,
  ReadinessSchema,
  RpcErrorSchema,
  TokenRequestSchema,
  TokenResponseSchema,
  ToolListSchema,
} from "./schemas";

// The REST API as OpenAPI 3.1 (docs/SPEC.md section 6), served at GET /api/openapi.json. Every schema is generated
// by z.toJSONSchema from the zod schema the route enforces (requests) or the one its answers are tested against
// (./schemas.ts); the error codes are the SPEC's.

type Json = Record<string, unknown>;

/** A schema's JSON Schema (2020-12, OpenAPI 3.1's dialect) as a schema object: without its `$schema`. */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io }) as Json;
  return rest;
}

/** One envelope per tool, `{name, arguments}`, its arguments the very schema the gateway's schema stage enforces. */
const ToolCallEnvelopeSchema = z.union(
  exposedTools(TOOL_NAMES).map((tool) => z.strictObject({ name: z.literal(tool.name), arguments: tool.schema })),
);

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

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

const json = (schema: Json) => ({ "application/json": { schema } });

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema });
const RETRY_AFTER = { "Retry-After": header("seconds to wait before trying again", { type: "integer", minimum: 0 }) };
const BEARER_CHALLENGE = {
  "WWW-Authenticate": header(
    "the bearer challenge: for /api/mcp, where its resource metadata is and which scopes to ask for",
  ),
};

/** An answer with the routes' error body, `codes` the SPEC's codes it can carry. */
const problem = (description: string, codes: string[], headers?: Json) => ({
  description,
  ...(headers ? { headers } : {}),
  content: json(jsonSchema(errorBodySchema(codes), "output")),
});

const oauthProblem = (description: string, errors: string[]) => ({
  description,
  content: json(jsonSchema(oauthErrorSchema(errors), "output")),
});

/** The answers every agent route can give besides its own: a bad key, and a failure of the host. */
const agentProblems = {
  "401": problem("no API key, or one that is unknown or revoked", ["auth.invalid-key"], BEARER_CHALLENGE),
  "503": problem("the host could not complete the request; retry later", ["host.error"]),
};

const idParameter = (name: string, description: string) => ({
  name,
  in: "path",
  required: true,
  description,
  schema: { type: "string" },
});

/** A strict object schema's fields as query parameters. */
function queryParameters(schema: z.ZodType): Json[] {
  const { properties = {}, required = [] } = jsonSchema(schema, "input") as {
    properties?: Record<string, Json>;
    required?: string[];
  };
  return Object.entries(properties).map(([name, fieldSchema]) => ({
    name,
    in: "query",
    required: required.includes(name),
    schema: fieldSchema,
  }));
}

const AGENT = [{ apiKey: [] }];
const AGENT_OR_CONNECTION = [{ apiKey: [] }, { oauth: [] }];

function agentPaths(): Json {
  return {
    "/api/v1/conversations": {
      post: {
        operationId: "openConversation",
        tags: ["Agent API"],
        summary: "Open a conversation about one customer (and optionally one order)",
        security: AGENT,
        requestBody: { required: true, content: json(jsonSchema(OpenConversationSchema, "input")) },
        responses: {
          "201": { description: "the conversation, its tools and scopes", content: json(ref("Conversation")) },
          "400": problem("the body is not valid (names the fields), or names a tool that does not exist", [
            "request.invalid",
            "tool.unknown",
          ]),
          "403": problem("the key's person is not an active agent", ["agent.not-authorized"]),
          "404": problem("no such customer in the agent's tenant, or no such order of the customer", [
            "customer.not-found",
            "order.not-found",
          ]),
          "413": problem("the body is larger than 16 KiB; it was not read further", ["request.too-large"]),
          "429": problem(
            "this agent opened too many conversations this minute, across its keys and connections; nothing opened",
            ["rate.limited"],
            RETRY_AFTER,
          ),
          ...agentProblems,
        },
      },
    },
    "/api/v1/conversations/{id}/tool-calls": {
      post: {
        operationId: "proposeToolCall",
        tags: ["Agent API"],
        summary: "Propose a tool call; the gateway's sequence decides its outcome",
        description: `The body is the raw envelope text, \`{"name", "arguments"}\` (at most ${MAX_ENVELOPE_BYTES} bytes, nesting at most ${MAX_DEPTH}, no duplicate keys), or with \`format\` a provider's payload of one or more calls. Every gateway outcome is 200 (its \`kind\` says what happened) except \`rate.limited\`, 429.`,
        security: AGENT,
        parameters: [
          idParameter("id", "the conversation"),
          {
            name: "format",
            in: "query",
            required: false,
            description: "toolgate (one envelope, answered with one outcome) or a provider's payload (a batch)",
            schema: { type: "string", enum: [...FORMATS], default: "toolgate" },
          },
          {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            description:
              "the call key: 1..200 printable ASCII characters (else call-key.missing); in a batch it becomes <key>:<index>",
            schema: { type: "string" },
          },
        ],
        requestBody: {
          required: true,
          content: json({
            anyOf: [
              ref("ToolCallEnvelope"),
              {
                type: "object",
                description: "a provider's payload, with ?format= naming it",
                additionalProperties: {},
              },
            ],
          }),
        },
        responses: {
          "200": {
            description: "the call's outcome (format=toolgate), or one outcome per call of a provider's payload",
            content: json({ anyOf: [ref("CallOutcome"), ref("BatchOutcome")] }),
          },
          "400": problem("format is not one of the formats", ["format.unknown"]),
          "404": problem("no such conversation of this agent", ["not-found"]),
          "429": {
            description: "rate.limited: the conversation's or the agent's calls this minute are spent",
            headers: RETRY_AFTER,
            content: json(ref("CallOutcome")),
          },
          ...agentProblems,
        },
      },
    },
    "/api/v1/conversations/{id}/tools": {
      get: {
        operationId: "listTools",
        tags: ["Agent API"],
        summary: "The model-facing tool definitions of a conversation",
        security: AGENT,
        parameters: [
          idParameter("id", "the conversation"),
          {
            name: "format",
            in: "query",
            required: false,
            schema: { type: "string", enum: [...DEFINITION_FORMATS], default: "toolgate" },
          },
        ],
        responses: {
          "200": {
            description: "the tools, generated from the schemas the gateway enforces",
            content: json(ref("ToolList")),
          },
          "400": problem("format is not one of the formats", ["format.unknown"]),
          "404": problem("no such conversation of this agent", ["not-found"]),
          ...agentProblems,
        },
      },
    },
    "/api/v1/tool-calls/{id}": {
      get: {
        operationId: "getToolCall",
        tags: ["Agent API"],
        summary: "A call's current outcome, optionally waiting for its decision",
        security: AGENT,
        parameters: [
          idParameter("id", "the call"),
          {
            name: "wait",
            in: "query",
            required: false,
            description:
              "seconds to wait for an undecided call to be decided; answered as soon as it is, else with its outcome then",
            schema: { type: "integer", minimum: 0, maximum: MAX_WAIT_SECONDS, default: 0 },
          },
        ],
        responses: {
          "200": { description: "the call's outcome", content: json(ref("CallOutcome")) },
          "400": problem(`wait is not a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`, ["wait.invalid"]),
          "404": problem("no such call of this agent", ["not-found"]),
          ...agentProblems,
        },
      },
    },
  };
}

const MCP_HEADERS = [
  {
    name: "conversation",
    in: "query",
    required: false,
    description:
      "the agent's conversation the calls run in (an API key must name one; a connection may leave it to its person)",
    schema: { type: "string" },
  },
  {
    name: "X-Toolgate-Conversation",
    in: "header",
    required: false,
    description: "as ?conversation=",
    schema: { type: "string" },
  },
  { name: "MCP-Protocol-Version", in: "header", required: false, schema: { type: "string" } },
  {
    name: "Mcp-Method",
    in: "header",
    required: false,
    description: "required by protocol revision 2026-07-28; must equal the body's method (else 400, -32020)",
    schema: { type: "string" },
  },
  {
    name: "Mcp-Name",
    in: "header",
    required: false,
    description: "required by 2026-07-28 for tools/call and tasks/*: the tool or task named in the body",
    schema: { type: "string" },
  },
  {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description: 'a call key when _meta["io.toolgate/idempotency-key"] gives none; in a batch <key>:<JSON-RPC id>',
    schema: { type: "string" },
  },
];

const rpcError = (description: string) => ({
  description,
  content: json(jsonSchema(RpcErrorSchema, "output")),
});

const mcpUnauthorized = problem(
  "no key or token (auth.required), or one that is not valid here (auth.invalid-token); WWW-Authenticate names the resource metadata and the scopes",
  ["auth.required", "auth.invalid-token"],
  BEARER_CHALLENGE,
);
const mcpForeign = rpcError(
  "the Host or Origin is not this server's (DNS-rebinding protection), before any key is read",
);
const mcpNotFound = problem("no such conversation of this agent, or an API key that names none", ["not-found"]);

function mcpPaths(): Json {
  const message = jsonSchema(JSONRPCMessageSchema, "input");
  const notPost = (method: string) => ({
    operationId: `mcp${method}`,
    tags: ["MCP"],
    summary: "Not served: the endpoint is stateless and answers POST only",
    security: AGENT_OR_CONNECTION,
    parameters: MCP_HEADERS.slice(0, 2),
    responses: {
      "401": mcpUnauthorized,
      "403": mcpForeign,
      "404": mcpNotFound,
      "405": rpcError("this stateless server answers POST only (Allow: POST)"),
    },
  });
  return {
    "/api/mcp": {
      post: {
        operationId: "mcp",
        tags: ["MCP"],
        summary: "The MCP endpoint (Streamable HTTP, stateless): JSON-RPC messages for one conversation",
        description:
          "Protocol 2025-11-25 (initialize, tools/list, tools/call, tasks/*) and 2026-07-28 (the per-request _meta envelope) on one address; every tools/call goes through the same gateway as POST /api/v1/conversations/{id}/tool-calls. An API key or an OAuth access token (only here).",
        security: AGENT_OR_CONNECTION,
        parameters: MCP_HEADERS,
        requestBody: { required: true, content: json({ anyOf: [message, { type: "array", items: message }] }) },
        responses: {
          "200": {
            description: "the JSON-RPC answer (a tools/call result carries structuredContent and call_id)",
            content: { ...json({ anyOf: [message, { type: "array", items: message }] }), "text/event-stream": {} },
          },
          "202": { description: "a notification or response was accepted; nothing to answer" },
          "400": rpcError(
            "the body is not JSON-RPC within the envelope limits (-32700), or its headers disagree with it (-32020), or names an unsupported version (-32022)",
          ),
          "401": mcpUnauthorized,
          "403": {
            description:
              'the Host or Origin is not this server\'s (a JSON-RPC error), or auth.insufficient-scope: a tools/call needs a scope the connection was not granted (WWW-Authenticate: error="insufficient_scope" with the scopes to ask for)',
            headers: BEARER_CHALLENGE,
            content: json({
              anyOf: [
                jsonSchema(errorBodySchema(["auth.insufficient-scope"]), "output"),
                jsonSchema(RpcErrorSchema, "output"),
              ],
            }),
          },
          "404": mcpNotFound,
          "503": problem("the host could not complete the request; retry later", ["host.error"]),
        },
      },
      get: notPost("Get"),
      delete: notPost("Delete"),
    },
  };
}

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

function oauthPaths(): Json {
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

function operatorPaths(): Json {
  return {
    "/api/tenants/{tenantId}/decision-log": {
      get: {
        operationId: "exportDecisionLog",
        tags: ["Decision log"],
        summary: "The tenant's decision log for a date range, every row with its hash (SPEC section 12)",
        security: [{ session: [] }],
        parameters: [idParameter("tenantId", "the signed-in person's tenant"), ...queryParameters(ExportQuerySchema)],
        responses: {
          "200": {
            description: "an attachment, streamed",
            content: {
              "text/csv": { schema: { type: "string" } },
              "application/x-ndjson": { schema: { type: "string" } },
            },
          },
          "400": problem(
            "from and to are not ISO dates in order (at most 366 days apart), or format is not csv or jsonl",
            ["request.invalid"],
          ),
          "401": problem("not signed in", ["auth.required"]),
          "403": problem("only supervisors and admins export the decision log", ["auth.forbidden"]),
          "404": problem("another tenant's log is answered as missing", ["not-found"]),
        },
      },
    },
    "/api/health": {
      get: {
        operationId: "health",
        tags: ["Operations"],
        summary: "Liveness: the process answers (no database)",
        security: [],
        responses: { "200": { description: "alive", content: json(jsonSchema(HealthSchema, "output")) } },
      },
    },
    "/api/ready": {
      get: {
        operationId: "ready",
        tags: ["Operations"],
        summary: "Readiness: whether this instance should get traffic",
        security: [],
        responses: {
          "200": { description: "ready", content: json(jsonSchema(ReadinessSchema, "output")) },
          "503": {
            description: "not ready: failing names the parts",
            content: json(jsonSchema(ReadinessSchema, "output")),
          },
        },
      },
    },
    "/api/metrics": {
      get: {
        operationId: "metrics",
        tags: ["Operations"],
        summary: "Prometheus metrics",
        security: [{ metricsToken: [] }],
        responses: {
          "200": { description: "Prometheus text format", content: { "text/plain": { schema: { type: "string" } } } },
          "401": problem("a valid metrics token is required", ["metrics.unauthorized"], BEARER_CHALLENGE),
        },
      },
    },
    "/api/openapi.json": {
      get: {
        operationId: "openApiDocument",
        tags: ["Operations"],
        summary: "This document",
        security: [],
        responses: { "200": { description: "the OpenAPI 3.1 document", content: json({ type: "object" }) } },
      },
    },
  };
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
