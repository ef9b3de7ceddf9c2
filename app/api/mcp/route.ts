import { MAX_ENVELOPE_BYTES } from "@/lib/gateway/parse";
import { notFound, withAgentConversation } from "@/lib/agent-api/http";
import { readBoundedBody } from "@/lib/http";
import { issuerOf } from "@/lib/auth/access-tokens";
import { refuseForeignOrigin } from "@/lib/agent-api/mcp/guard";
import { mcpPreflight, withMcpCors } from "@/lib/agent-api/mcp/cors";
import { handleMcpRequest } from "@/lib/agent-api/mcp/endpoint";

export const dynamic = "force-dynamic";

/** MCP over Streamable HTTP, bound to one conversation: `?conversation=<id>` or the `X-Toolgate-Conversation` header. */
async function handle(request: Request): Promise<Response> {
  const foreign = refuseForeignOrigin(request);
  if (foreign) return foreign;
  const id =
    new URL(request.url).searchParams.get("conversation") ?? request.headers.get("x-toolgate-conversation") ?? "";
  const response = await withAgentConversation(
    request,
    id,
    async (agent, found) => {
      if (!found) return notFound("conversation");
      const raw =
        request.method === "POST"
          ? await readBoundedBody(request, MAX_ENVELOPE_BYTES)
          : { bytes: new Uint8Array(0), truncated: false };
      return handleMcpRequest(request, { agent, ...found }, raw);
    },
    { tokenIssuer: issuerOf(request) },
  );
  return withMcpCors(request, response);
}

export { handle as GET, handle as POST, handle as DELETE, mcpPreflight as OPTIONS };
