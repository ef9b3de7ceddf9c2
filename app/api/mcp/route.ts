import { MAX_ENVELOPE_BYTES } from "@/lib/gateway";
import { notFound, withAgentConversation } from "@/lib/agent-api/http";
import { readBoundedBody } from "@/lib/http";
import { issuerOf } from "@/lib/auth/keys/access-tokens";
import { refuseForeignOrigin } from "@/lib/agent-api/mcp/guard";
import { mcpPreflight, withMcpCors } from "@/lib/agent-api/mcp/cors";
import { handleMcpRequest } from "@/lib/agent-api/mcp/endpoint";

export const dynamic = "force-dynamic";

/**
 * MCP over Streamable HTTP, bound to one conversation: the one an OAuth connection's person chose on the Connections
 * page (the URL is then the bare resource, the same for every customer), or one named by `?conversation=<id>` or the
 * `X-Toolgate-Conversation` header (a pasted key, or a connection made before issue 40).
 */
async function handle(request: Request): Promise<Response> {
  const foreign = refuseForeignOrigin(request);
  if (foreign) return foreign;
  const named = new URL(request.url).searchParams.get("conversation") ?? request.headers.get("x-toolgate-conversation");
  const issuer = issuerOf(request);
  const response = await withAgentConversation(
    request,
    named,
    async (agent, found) => {
      // Only a connection may leave the conversation to its person; a pasted key names one, as before.
      if (!found && (named !== null || !agent.connection)) return notFound("conversation");
      const raw =
        request.method === "POST"
          ? await readBoundedBody(request, MAX_ENVELOPE_BYTES)
          : { bytes: new Uint8Array(0), truncated: false };
      return handleMcpRequest(request, found ? { agent, ...found, issuer } : { agent, issuer }, raw);
    },
    { tokenIssuer: issuer },
  );
  return withMcpCors(request, response);
}

export { handle as GET, handle as POST, handle as DELETE, mcpPreflight as OPTIONS };
