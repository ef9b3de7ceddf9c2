import { POST as mcpRoute } from "@/app/api/mcp/route";

/** The address the in-process MCP tests talk to; nothing listens there, `routeFetch` answers. */
export const MCP_BASE = "http://127.0.0.1:3000";

/** fetch for the SDK client: the real route handler in this process, with the Host header a server would see. */
export const routeFetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const request = new Request(input, init);
  const headers = new Headers(request.headers);
  if (!headers.has("host")) headers.set("host", new URL(request.url).host);
  return mcpRoute(new Request(request, { headers }));
}) as typeof fetch;
