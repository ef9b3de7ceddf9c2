import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { callBody } from "../api/http";
import type { AuthenticatedAgent } from "../auth/api-keys";
import type { ConversationFacts, TenantPolicy } from "../gateway/types";
import { modelProjection } from "../gateway/outcome";
import { parseJsonText, type RawProposal } from "../gateway/parse";
import { proposeToolCall } from "../gateway/pipeline";
import { findTool, providerDefinition } from "../tools/registry";

// The MCP server for one agent and one conversation, over Streamable HTTP, stateless: a fresh server and
// transport per HTTP request, so any app instance can answer any request. tools/call goes through the same
// gateway function as the HTTP API; outcomes other than executed are tool results with isError and the
// model projection, never protocol errors. Only a tool the conversation does not expose is a protocol error.

/** Where a runtime puts its call key for a write: host metadata of the request, never an argument. */
export const MCP_CALL_KEY_META = "io.toolgate/idempotency-key";

interface Bound {
  agent: AuthenticatedAgent;
  conversation: ConversationFacts;
  policy: TenantPolicy;
}

function buildServer(bound: Bound, headerKey: string | null): Server {
  const server = new Server({ name: "toolgate", version: "0.1.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: bound.conversation.tools.flatMap((name) => {
      const tool = findTool(name);
      return tool ? [providerDefinition(tool, "mcp") as { name: string; description: string; inputSchema: { type: "object" } }] : [];
    }),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args, _meta: meta } = request.params;
    const metaKey = meta?.[MCP_CALL_KEY_META];
    const envelope = `{"name":${JSON.stringify(name)},"arguments":${JSON.stringify(args ?? {})}}`;
    const call = await proposeToolCall({
      conversation: bound.conversation,
      policy: bound.policy,
      apiKeyId: bound.agent.apiKeyId,
      callKey: typeof metaKey === "string" ? metaKey : headerKey,
      raw: { bytes: new TextEncoder().encode(envelope), truncated: false },
    });
    if (call.outcome.code === "tool.unknown" || call.outcome.code === "tool.not-available") {
      throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name.slice(0, 64)}`);
    }
    const body = callBody(call.id, call.outcome, call.replayed);
    return {
      content: [{ type: "text" as const, text: JSON.stringify(modelProjection(call.outcome)) }],
      structuredContent: { call_id: body.id, kind: body.kind, code: body.code, model: body.model },
      isError: call.outcome.kind !== "executed",
    };
  });
  return server;
}

/**
 * Answers one MCP HTTP request. The body is checked against the envelope limits (size, depth, duplicate
 * keys) before the SDK parses it, so duplicates inside `arguments` cannot be resolved silently.
 */
export async function handleMcpRequest(request: Request, bound: Bound, raw: RawProposal): Promise<Response> {
  if (request.method === "POST") {
    const parsed = parseJsonText(raw);
    if (!parsed.ok) {
      return Response.json({ jsonrpc: "2.0", id: null, error: { code: ErrorCode.ParseError, message: parsed.outcome.code } }, { status: 400 });
    }
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = buildServer(bound, request.headers.get("idempotency-key"));
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody: parsed.value });
    } finally {
      await server.close();
    }
  }
  return Response.json({ jsonrpc: "2.0", id: null, error: { code: ErrorCode.InvalidRequest, message: "this stateless server answers POST only" } }, { status: 405, headers: { Allow: "POST" } });
}
