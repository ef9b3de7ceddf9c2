import { mcpPreflight } from "@/lib/agent-api/mcp/cors";
import { noSuchDiscovery } from "@/lib/agent-api/mcp/guard";
import { serveMcp } from "@/lib/agent-api/mcp/serve";
import { publicPreflight } from "@/lib/oauth/cors";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ path: string[] }> };

/** The conversation a path names: `c/<id>`, the URL a person pastes; null for any other path. */
const conversationOf = async ({ params }: Context) => {
  const { path } = await params;
  return path.length === 2 && path[0] === "c" ? path[1] : null;
};

/** MCP at `/api/mcp/c/<id>`; any other path under /api/mcp (a client's discovery guess) answers JSON, never HTML. */
const handle = async (request: Request, context: Context) => {
  const conversation = await conversationOf(context);
  return conversation === null ? noSuchDiscovery() : serveMcp(request, conversation);
};

const preflight = async (request: Request, context: Context) =>
  (await conversationOf(context)) === null ? publicPreflight("GET")() : mcpPreflight(request);

export { handle as GET, handle as POST, handle as DELETE, preflight as OPTIONS };
