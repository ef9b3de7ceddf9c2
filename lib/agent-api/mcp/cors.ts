import { refuseForeignOrigin } from "./guard";

// CORS for /api/mcp, for a browser-based MCP client on an allowed origin (guard.ts: this server's own, loopback,
// MCP_ALLOWED_ORIGINS). The token travels in the Authorization header, never a cookie, so no credentials are
// allowed; the origin is echoed only when the guard accepts it, and a preflight from any other origin is the
// guard's 403. The request headers allowed are the ones MCP clients send (both revisions' protocol headers, the
// conversation and the call key); WWW-Authenticate is exposed so that a client can follow a 401 to the
// resource's metadata.

const ALLOW_HEADERS = [
  "Authorization",
  "Content-Type",
  "Accept",
  "MCP-Protocol-Version",
  "Mcp-Method",
  "Mcp-Name",
  "Idempotency-Key",
  "X-Toolgate-Conversation",
].join(", ");

/** The answer to a preflight of /api/mcp. */
export function mcpPreflight(request: Request): Response {
  const foreign = refuseForeignOrigin(request);
  if (foreign) return foreign;
  const origin = request.headers.get("origin");
  return new Response(null, {
    status: 204,
    headers: {
      ...(origin ? { "Access-Control-Allow-Origin": origin } : {}),
      "Access-Control-Allow-Methods": "POST",
      "Access-Control-Allow-Headers": ALLOW_HEADERS,
      "Access-Control-Max-Age": "600",
      Vary: "Origin",
    },
  });
}

/** The response, readable by the page that sent the request when its origin is allowed (the guard ran before). */
export function withMcpCors(request: Request, response: Response): Response {
  const origin = request.headers.get("origin");
  if (origin === null) return response;
  const headers = new Headers(response.headers);
  headers.set("Access-Control-Allow-Origin", origin);
  headers.set("Access-Control-Expose-Headers", "WWW-Authenticate");
  headers.append("Vary", "Origin");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
