import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { AuthenticatedAgent } from "../../auth/keys/api-keys";
import { isPlainObject } from "../../canonical";
import { type CallResult, type ConversationFacts, type TenantPolicy } from "../../gateway";
import { MODEL_STATUSES, modelProjection, waitingOn, type Outcome } from "../../outcome";
import { proposeCall } from "../propose";
import { exposedTools, providerDefinition } from "../../tools/registry";
import { upstreamDefinitions } from "../../upstream/calls/exposure";
import { SWITCH_TOOL, switchAnswer, switchToolDefinition } from "./switch-tool";
import { createCallTask, registerTaskHandlers, TASK_CAPABILITIES } from "./tasks/tasks";

// The MCP server for one agent and one conversation, over Streamable HTTP, stateless: a fresh server and
// transport per HTTP request, so any app instance can answer any request. tools/call goes through the same
// gateway function as the HTTP API. Every outcome is a tool result carrying the model projection as structured
// content; executed and held calls are normal results, the others have isError. Only a tool the conversation
// does not expose is a protocol error. A client that negotiated tasks may augment a call to a tool that can be held
// with `task`: it then gets a task that ends when the call does (lib/mcp/tasks.ts).

/** Where a runtime puts its call key for a write: host metadata of the request, never an argument. */
export const MCP_CALL_KEY_META = "io.toolgate/idempotency-key";

/** The structured content of every tool result: the model projection plus the call's id (and a held call's expiry). */
export const MCP_OUTPUT_SCHEMA = {
  type: "object",
  properties: {
    status: {
      type: "string",
      enum: MODEL_STATUSES,
    },
    call_id: { type: "string" },
    result: {},
    paths: { type: "array", items: { type: "string" } },
    message: { type: "string" },
    reason: { type: "string" },
    rules: { type: "array", items: { type: "string" } },
    awaiting: {
      type: "object",
      properties: { call_id: { type: "string" }, amount_cents: { type: "integer" }, currency: { type: "string" } },
      required: ["call_id", "amount_cents", "currency"],
    },
    expires_at: { type: "string" },
    replayed: { type: "boolean" },
  },
  required: ["status", "call_id"],
} as const;

export interface Bound {
  agent: AuthenticatedAgent;
  conversation: ConversationFacts;
  policy: TenantPolicy;
  /** This server's public address, for the Connections page an OAuth connection's person switches customers on. */
  issuer: string;
}

type ExposedTool = ReturnType<typeof exposedTools>[number];

/** The conversation's tools as either protocol revision lists them; `extra` adds a revision's own fields. */
export function listedTools(conversation: Pick<ConversationFacts, "tools">, extra: (tool: ExposedTool) => object) {
  return exposedTools(conversation.tools).map((tool) => ({
    ...(providerDefinition(tool, "mcp") as { name: string; description: string; inputSchema: { type: "object" } }),
    outputSchema: MCP_OUTPUT_SCHEMA as unknown as { type: "object" },
    annotations: {
      readOnlyHint: tool.effect === "read",
      destructiveHint: tool.effect === "irreversible",
      openWorldHint: false,
    },
    ...extra(tool),
  }));
}

/**
 * The conversation's reviewed upstream tools as MCP lists them; their results come back in toolgate's projection
 * like every call's (the upstream's own answer under `result`), so they carry toolgate's output schema.
 */
export async function upstreamTools(conversation: Pick<ConversationFacts, "tenantId" | "tools">) {
  const tools = await upstreamDefinitions(conversation, "mcp");
  return tools.map((tool) => ({
    ...(tool as { name: string; description: string; inputSchema: { type: "object" } }),
    outputSchema: MCP_OUTPUT_SCHEMA as unknown as { type: "object" },
  }));
}

/** What a bound connection lists beside the conversation's tools: the way to ask its person for another customer. */
export const connectionTools = (bound: Bound) => (bound.agent.connection ? [switchToolDefinition] : []);

/**
 * `request_customer_switch` on an OAuth connection: the Connections page's address, answered here, changing nothing
 * and proposing nothing. Null for any other tool, and on a pasted key (whose runtime chose the conversation).
 */
export const answerSwitch = (bound: Bound, name: string) =>
  name === SWITCH_TOOL && bound.agent.connection ? switchAnswer(bound.issuer) : null;

/** A call's key: the request's host metadata first, then the Idempotency-Key header. */
export function callKeyOf(meta: Record<string, unknown> | undefined, headerKey: string | null): string | null {
  const metaKey = meta?.[MCP_CALL_KEY_META];
  return typeof metaKey === "string" ? metaKey : headerKey;
}

/** Whether a wait of the request (`get_call_status`, `tasks/result`) found its key or connection revoked. */
export interface Credential {
  revoked: boolean;
}

/**
 * tools/call through the same gateway function as the HTTP API; for a tool the conversation does not expose, the
 * message of the protocol error it is instead, naming the conversation's tool nearest the one called, when one is near.
 * A call whose credential was revoked while it waited answers nothing: it marks `credential` and throws, and
 * endpoint.ts answers the whole request as one with a revoked credential.
 */
export async function proposeMcpCall(
  bound: Bound,
  name: string,
  args: unknown,
  callKey: string | null,
  credential: Credential,
): Promise<CallResult | string> {
  const envelope = `{"name":${JSON.stringify(name)},"arguments":${JSON.stringify(args ?? {})}}`;
  const call = await proposeCall({
    conversation: bound.conversation,
    policy: bound.policy,
    apiKeyId: bound.agent.apiKeyId,
    callKey,
    raw: { bytes: new TextEncoder().encode(envelope), truncated: false },
  });
  if (call === "revoked") {
    credential.revoked = true;
    throw protocolError(ErrorCode.InvalidRequest, "this connection or key was revoked while it waited");
  }
  const { code, nearest } = call.outcome;
  if (code !== "tool.unknown" && code !== "tool.not-available") return call;
  return `unknown tool: ${name.slice(0, 64)}${nearest ? `; did you mean ${nearest}?` : ""}`;
}

/** The explicit keys of one HTTP request: a header key is one call's key, so each call of a batch gets its own. */
interface RequestKeys {
  header: string | null;
  batch: boolean;
}

/** What an MCP client gets for one call: the model's projection, never the internal code behind it. */
export function mcpToolResult(callId: string, result: Outcome, replayed: boolean) {
  const structured = {
    ...modelProjection(result),
    call_id: callId,
    ...waitingOn(callId, result),
    ...(replayed ? { replayed: true } : {}),
  };
  return {
    content: [{ type: "text" as const, text: JSON.stringify(structured) }],
    structuredContent: structured,
    isError: result.kind !== "executed" && result.kind !== "pending_approval",
  };
}

// Thrown as a plain error with a JSON-RPC code: the SDK's McpError would put "MCP error -32602:" into the message
// that the client's McpError prefixes again.
const protocolError = (code: number, message: string) => Object.assign(new Error(message), { code });

function buildServer(bound: Bound, keys: RequestKeys, credential: Credential, signal: AbortSignal): Server {
  const server = new Server(
    { name: "toolgate", version: "0.1.0" },
    { capabilities: { tools: {}, tasks: TASK_CAPABILITIES } },
  );
  const tasks = { agent: bound.agent, conversation: bound.conversation, signal };
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      ...listedTools(bound.conversation, (tool) =>
        // Only a write can be held for approval, so only a write may run as a task; a read answers at once.
        tool.effect === "read" ? {} : { execution: { taskSupport: "optional" as const } },
      ),
      ...(await upstreamTools(bound.conversation)),
      ...connectionTools(bound),
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args, _meta: meta, task } = request.params;
    const switching = answerSwitch(bound, name);
    if (switching) return switching;
    // The spec's answer to a task asked of a tool without taskSupport (-32601), before anything is proposed.
    const asked = task ? exposedTools(bound.conversation.tools).find((tool) => tool.name === name) : undefined;
    if (asked?.effect === "read") throw protocolError(ErrorCode.MethodNotFound, `${name} does not run as a task`);
    const headerKey =
      keys.header === null ? null : keys.batch ? `${keys.header}:${String(extra.requestId)}` : keys.header;
    const call = await proposeMcpCall(bound, name, args, callKeyOf(meta, headerKey), credential);
    if (typeof call === "string") throw protocolError(ErrorCode.InvalidParams, call);
    const result = mcpToolResult(call.id, call.outcome, call.replayed);
    return task ? createCallTask(tasks, call.id, result) : result;
  });
  registerTaskHandlers(server, tasks, credential, mcpToolResult);
  return server;
}

/**
 * Answers one request of revisions 2025-03-26 to 2025-11-25 (an `initialize`-era request, endpoint.ts decides),
 * whose body has already passed the envelope limits.
 */
export async function serveLegacy(
  request: Request,
  bound: Bound,
  body: unknown,
  credential: Credential,
): Promise<Response> {
  const batch =
    Array.isArray(body) &&
    body.filter((message) => isPlainObject(message) && message.method === "tools/call").length > 1;
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  const server = buildServer(
    bound,
    { header: request.headers.get("idempotency-key"), batch },
    credential,
    request.signal,
  );
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    await server.close();
  }
}
