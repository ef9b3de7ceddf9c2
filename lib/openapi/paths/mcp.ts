import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { errorBodySchema, RpcErrorSchema } from "../schemas";
import { AGENT_OR_CONNECTION, BEARER_CHALLENGE, json, jsonSchema, problem, type Json } from "../parts";

// The MCP endpoint's paths in the OpenAPI document: JSON-RPC over POST, GET and DELETE, with a key or a token.

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

export function mcpPaths(): Json {
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
