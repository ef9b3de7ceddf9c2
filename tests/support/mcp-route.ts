import { POST as mcpRoute } from "@/app/api/mcp/route";
import { POST as mcpPathRoute } from "@/app/api/mcp/[...path]/route";

/** The address the in-process MCP tests talk to; nothing listens there, `routeFetch` answers. */
export const MCP_BASE = "http://127.0.0.1:3000";

/** fetch for the SDK client: the real route handlers in this process, with the Host header a server would see. */
export const routeFetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const request = new Request(input, init);
  const headers = new Headers(request.headers);
  if (!headers.has("host")) headers.set("host", new URL(request.url).host);
  const routed = new Request(request, { headers });
  const path = new URL(request.url).pathname;
  // A conversation's own URL (/api/mcp/c/<id>) is answered by the catch-all route under /api/mcp.
  if (path.startsWith("/api/mcp/"))
    return mcpPathRoute(routed, { params: Promise.resolve({ path: path.slice("/api/mcp/".length).split("/") }) });
  return mcpRoute(routed);
}) as typeof fetch;
