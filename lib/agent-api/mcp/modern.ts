import {
  createMcpHandler,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
} from "@modelcontextprotocol/server";
import {
  answerSwitch,
  callKeyOf,
  connectionTools,
  listedTools,
  mcpToolResult,
  upstreamTools,
  proposeMcpCall,
  type Bound,
  type Credential,
} from "./server";
import { createHeldCallTask, declaresTasks, registerTasksExtension, TASKS_EXTENSION } from "./tasks/extension";

// Protocol revision 2026-07-28 on /api/mcp (decision 020), served by the v2 SDK's per-request handler: no
// initialize and no session; each request carries its version and client capabilities in `_meta`, and its
// Mcp-Method / Mcp-Name headers, which the SDK checks against the body. server/discover comes from the SDK and
// the capabilities below. tools/list and tools/call are the same tools and the same gateway call as 2025-11-25.

/** The modern revision this endpoint serves beside 2025-11-25. */
export const MODERN_VERSION = "2026-07-28";

const INSTRUCTIONS =
  "toolgate's tools for one support conversation. A refund may be held for a supervisor: then the call answers " +
  "pending_approval (or a task, when the request declares the tasks extension) and get_call_status reads it back.";

function buildModernServer(
  bound: Bound,
  headerKey: string | null,
  credential: Credential,
  signal: AbortSignal,
): Server {
  const server = new Server(
    { name: "toolgate", version: "0.1.0" },
    { capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } }, instructions: INSTRUCTIONS },
  );
  const tasks = { agent: bound.agent, conversation: bound.conversation, signal };
  server.setRequestHandler("tools/list", async () => ({
    tools: [
      ...listedTools(bound.conversation, () => ({})),
      ...(await upstreamTools(bound.conversation)),
      ...connectionTools(bound),
    ],
  }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name, arguments: args, _meta: meta } = request.params;
    const switching = answerSwitch(bound, name);
    if (switching) return switching;
    const call = await proposeMcpCall(bound, name, args, callKeyOf(meta, headerKey), credential);
    if (typeof call === "string") throw new ProtocolError(ProtocolErrorCode.InvalidParams, call);
    // The server decides when a task helps: only a call held for a supervisor, and only for a client that said so.
    // The SDK types tools/call without the extension's task result; its encoder passes `resultType: "task"` on.
    if (call.outcome.kind === "pending_approval" && declaresTasks(ctx))
      return (await createHeldCallTask(tasks, call.id)) as unknown as CallToolResult;
    return mcpToolResult(call.id, call.outcome, call.replayed);
  });
  registerTasksExtension(server, tasks, mcpToolResult);
  return server;
}

/** Answers one 2026-07-28 request (or a malformed claim to be one: the SDK answers it with the spec's 400). */
export async function serveModern(
  request: Request,
  bound: Bound,
  body: unknown,
  credential: Credential,
): Promise<Response> {
  const handler = createMcpHandler(
    () => buildModernServer(bound, request.headers.get("idempotency-key"), credential, request.signal),
    { legacy: "reject" },
  );
  try {
    return await handler.fetch(request, { parsedBody: body });
  } finally {
    await handler.close();
  }
}
