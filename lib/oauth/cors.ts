// CORS for the endpoints a browser-based MCP client (an inspector, a web IDE) calls from its own page: the
// discovery documents, token and registration. None of them reads a cookie or answers differently by origin, so
// any origin may read them, without credentials. A preflight allows only the methods and request headers these
// endpoints use: Content-Type for the token and registration posts, MCP-Protocol-Version, which MCP clients send
// on discovery requests.

const ALLOW_HEADERS = "Content-Type, MCP-Protocol-Version";

/** The header every answer of a public endpoint carries. */
export const PUBLIC_CORS = { "Access-Control-Allow-Origin": "*" } as const;

/** The answer to a preflight of a public endpoint that takes these methods. */
export const publicPreflight = (methods: string) => () =>
  new Response(null, {
    status: 204,
    headers: {
      ...PUBLIC_CORS,
      "Access-Control-Allow-Methods": methods,
      "Access-Control-Allow-Headers": ALLOW_HEADERS,
      "Access-Control-Max-Age": "600",
    },
  });
