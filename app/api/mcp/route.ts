import { mcpPreflight } from "@/lib/agent-api/mcp/cors";
import { serveMcp } from "@/lib/agent-api/mcp/serve";

export const dynamic = "force-dynamic";

/** MCP bound to one conversation: `?conversation=<id>` or the `X-Toolgate-Conversation` header (see also c/<id>). */
const handle = (request: Request) =>
  serveMcp(
    request,
    new URL(request.url).searchParams.get("conversation") ?? request.headers.get("x-toolgate-conversation") ?? "",
  );

export { handle as GET, handle as POST, handle as DELETE, mcpPreflight as OPTIONS };
