import { issuerOf } from "../../auth/access-tokens";
import { MAX_ENVELOPE_BYTES } from "../../gateway/parse";
import { readBoundedBody } from "../../http";
import { notFound, withAgentConversation } from "../http";
import { withMcpCors } from "./cors";
import { handleMcpRequest } from "./endpoint";
import { refuseForeignOrigin } from "./guard";

/**
 * One MCP request over Streamable HTTP, bound to one conversation, at either address of the endpoint:
 * `/api/mcp/c/<id>` (the URL is the protected resource, as VS Code requires) or `/api/mcp?conversation=<id>` (or
 * the `X-Toolgate-Conversation` header), kept for the clients configured with it.
 */
export async function serveMcp(request: Request, conversationId: string): Promise<Response> {
  const foreign = refuseForeignOrigin(request);
  if (foreign) return foreign;
  const response = await withAgentConversation(
    request,
    conversationId,
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
