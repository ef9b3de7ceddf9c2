import { z } from "zod";
import { ALL_SCOPES } from "../oauth/consent/authorize-scopes";
import { ALL_CODES, MODEL_STATUSES, outcome } from "../outcome";

// What the REST routes answer, as zod: the document's response schemas are generated from these, and the client's
// test parses the real answers with them, so a field the routes add or drop without the document fails a test.
// Request schemas are not here: the document takes them from the modules that enforce them.

const nonEmpty = (values: string[]) => values as [string, ...string[]];
const KINDS = nonEmpty([...new Set(ALL_CODES.map((code) => outcome(code).kind))]);
const STAGES = nonEmpty([...new Set(ALL_CODES.map((code) => outcome(code).stage))]);

/** `{error: {code, message}}`, every route's error body; `codes` are the SPEC codes the answer can carry. */
export const errorBodySchema = (codes: string[]) =>
  z.object({
    error: z.object({
      code: z.enum(nonEmpty(codes)).describe("the SPEC's code: what went wrong, for a program to branch on"),
      message: z.string().describe("what went wrong and what to do, in words for a person"),
    }),
  });

/** RFC 6749 §5.2 error body of the OAuth endpoints. */
export const oauthErrorSchema = (errors: string[]) =>
  z.object({ error: z.enum(nonEmpty(errors)), error_description: z.string() });

/** The MCP endpoint's refusals before any JSON-RPC request is served: a JSON-RPC error answering no id. */
export const RpcErrorSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.null(),
  error: z.object({ code: z.int(), message: z.string(), data: z.unknown().optional() }),
});

export const ConversationSchema = z.object({
  id: z.string().describe("the conversation's id, conv_..."),
  tools: z.array(z.string()).describe("the tools the conversation exposes (get_call_status is always added)"),
  scopes: z.array(z.enum(ALL_SCOPES)).describe("the agent's scopes narrowed to what the tools need"),
});

const AwaitedCallSchema = z
  .object({ call_id: z.string(), amount_cents: z.int(), currency: z.string() })
  .describe("the earlier refund of the order still awaiting the payment provider (refund.in-progress)");

const ModelProjectionSchema = z
  .object({
    status: z.enum(MODEL_STATUSES),
    paths: z.array(z.string()).optional().describe("the argument paths to fix (invalid_arguments)"),
    result: z.unknown().optional(),
    message: z
      .string()
      .optional()
      .describe(
        "what to change before sending the call again (the arguments to fix, a fault of the runtime), which call to wait on, or, for a call held or not yet confirmed, what to do meanwhile",
      ),
    call_id: z
      .string()
      .optional()
      .describe("this call's id, for get_call_status, when it is held for a supervisor or not yet confirmed"),
    expires_at: z.string().optional().describe("when a held call's approval request expires"),
    reason: z.string().optional().describe("why a supervisor's decision or its re-check stopped the call"),
    awaiting: AwaitedCallSchema.optional(),
  })
  .describe("what an agent runtime should show the model; never an internal reason such as a fraud hold");

/** `callBody` in lib/agent-api/http.ts: one call's outcome (SPEC section 5). */
export const CallOutcomeSchema = z.object({
  id: z.string().describe("the call's id, call_..."),
  kind: z.enum(KINDS),
  stage: z.enum(STAGES),
  code: z.enum(nonEmpty(ALL_CODES)).describe("one code of the SPEC's section 5 table; it fixes kind and stage"),
  issues: z
    .array(z.object({ path: z.string(), problem: z.string() }))
    .optional()
    .describe("the property paths that failed, never the values"),
  reason: z.string().optional().describe("a supervisor's denial note, or the failed re-check in words"),
  model: ModelProjectionSchema,
  result: z.unknown().optional().describe("the tool's result, when executed"),
  approval: z
    .object({
      id: z.string(),
      expires_at: z.string(),
      preview: z.record(z.string(), z.unknown()).describe("what the supervisor sees, with the limits it passes"),
    })
    .optional()
    .describe("the approval request, while pending"),
  decision: z
    .object({ approved_arguments: z.record(z.string(), z.unknown()) })
    .optional()
    .describe("the arguments a supervisor narrowed the call to"),
  awaiting: AwaitedCallSchema.optional(),
  replayed: z.literal(true).optional().describe("this answer is the stored outcome of an earlier identical call"),
});

export const BatchOutcomeSchema = z.object({
  format: z.string(),
  results: z.array(
    z.intersection(
      CallOutcomeSchema,
      z.object({
        ref: z.string().nullable().describe("the provider's id of the call (its call_id, tool_use id), if any"),
      }),
    ),
  ),
});

export const ToolListSchema = z.object({
  tools: z
    .array(z.record(z.string(), z.unknown()))
    .describe("each tool's name, description and JSON Schema, in the shape the format asks for"),
});

export const ProtectedResourceMetadataSchema = z.object({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  scopes_supported: z.array(z.enum(ALL_SCOPES)),
  bearer_methods_supported: z.array(z.string()),
  resource_name: z.string(),
});

export const AuthorizationServerMetadataSchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  registration_endpoint: z.string(),
  scopes_supported: z.array(z.enum(ALL_SCOPES)),
  response_types_supported: z.array(z.string()),
  response_modes_supported: z.array(z.string()),
  grant_types_supported: z.array(z.string()),
  token_endpoint_auth_methods_supported: z.array(z.string()),
  token_endpoint_auth_signing_alg_values_supported: z.array(z.string()),
  code_challenge_methods_supported: z.array(z.string()),
  client_id_metadata_document_supported: z.boolean(),
  authorization_response_iss_parameter_supported: z.boolean(),
});

export const ClientRegistrationSchema = z.object({
  client_id: z.string(),
  client_id_issued_at: z.int(),
  client_secret: z.string().optional().describe("only for client_secret_post; shown once, stored as its hash"),
  client_secret_expires_at: z.literal(0).optional(),
  client_name: z.string(),
  redirect_uris: z.array(z.string()),
  client_uri: z.string().optional(),
  token_endpoint_auth_method: z.enum(["none", "client_secret_post"]),
  grant_types: z.array(z.string()),
  response_types: z.array(z.string()),
});

export const TokenResponseSchema = z.object({
  access_token: z.string().describe("a JWT (typ at+jwt) for /api/mcp only"),
  token_type: z.literal("Bearer"),
  expires_in: z.int(),
  refresh_token: z.string().describe("single use: every refresh answers a new one"),
  scope: z.string(),
});

/**
 * The token endpoint's form (RFC 6749 §4.1.3, §6; RFC 7523 client assertions). lib/oauth/tokens/token.ts and client-auth.ts
 * read these fields by name and answer each fault with its RFC 6749 error, so this schema describes, not parses.
 */
export const TokenRequestSchema = z.object({
  grant_type: z.enum(["authorization_code", "refresh_token"]),
  client_id: z.string().optional().describe("required unless a client_assertion names the client"),
  code: z.string().optional().describe("authorization_code: the code from the redirect (60 s, single use)"),
  redirect_uri: z.string().optional().describe("authorization_code: the redirect URI the code was issued for"),
  code_verifier: z.string().optional().describe("authorization_code: PKCE, S256 of it must equal the challenge"),
  refresh_token: z.string().optional().describe("refresh_token: the latest refresh token of the connection"),
  resource: z.string().optional().describe("when sent, the MCP resource (<issuer>/api/mcp)"),
  client_secret: z.string().optional().describe("client_secret_post clients only"),
  client_assertion_type: z.literal("urn:ietf:params:oauth:client-assertion-type:jwt-bearer").optional(),
  client_assertion: z.string().optional().describe("private_key_jwt clients only: a JWT signed by a key at jwks_uri"),
});

export const HealthSchema = z.object({ status: z.literal("ok") });

export const ReadinessSchema = z.object({
  status: z.enum(["ready", "not-ready"]),
  checks: z
    .record(z.string(), z.string())
    .optional()
    .describe("with the metrics token only: each part, ok, off, or what is wrong with it"),
  failing: z.array(z.string()).optional().describe("with the metrics token only, when not ready: the parts that fail"),
});
