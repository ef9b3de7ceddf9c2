import { notFound, readBoundedBody, withAgentConversation } from "@/lib/agent-api/http";
import { issuerOf } from "@/lib/auth/access-tokens";
import { refuseForeignOrigin } from "@/lib/agent-api/mcp/guard";
import { handleMcpRequest } from "@/lib/agent-api/mcp/server";

export const dynamic = "force-dynamic";

/** MCP over Streamable HTTP, bound to one conversation: `?conversation=<id>` or the `X-Toolgate-Conversation` header. */
async function handle(request: Request): Promise<Response> {
  const foreign = refuseForeignOrigin(request);
  if (foreign) return foreign;
  const id =
    new URL(request.url).searchParams.get("conversation") ?? request.headers.get("x-toolgate-conversation") ?? "";
  return withAgentConversation(
    request,
    id,
    async (agent, found) => {
      if (!found) return notFound("conversation");
      const raw =
        request.method === "POST" ? await readBoundedBody(request) : { bytes: new Uint8Array(0), truncated: false };
      return handleMcpRequest(request, { agent, ...found }, raw);
    },
    { tokenIssuer: issuerOf(request) },
  );
}

export { handle as GET, handle as POST, handle as DELETE };
