import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { env } from "../../env";
import { PUBLIC_CORS } from "../../oauth/cors";

// DNS-rebinding protection for /api/mcp: a page on a foreign site must not reach the server through a name that
// resolves to it (its Host) nor call it from a browser (its Origin). Loopback names are always allowed; the
// deployment's own names come from NEXTAUTH_URL and OAUTH_ISSUER (the address OAuth clients are given, which may
// be a public name in front of a private NEXTAUTH_URL); more from MCP_ALLOWED_HOSTS and MCP_ALLOWED_ORIGINS
// (comma-separated host names, and origins such as https://inspector.example.com).

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];

function hostnameOf(url: string | undefined): string | null {
  try {
    return url ? new URL(url).hostname.toLowerCase() : null;
  } catch {
    return null;
  }
}

function allowedHosts(): Set<string> {
  const settings = env();
  const own = [hostnameOf(settings.NEXTAUTH_URL), hostnameOf(settings.OAUTH_ISSUER)].filter((host) => host !== null);
  return new Set([...LOOPBACK, ...own, ...settings.MCP_ALLOWED_HOSTS]);
}

const forbidden = (message: string) =>
  Response.json({ jsonrpc: "2.0", id: null, error: { code: ErrorCode.InvalidRequest, message } }, { status: 403 });

/** A 403 for a request whose Host or Origin is not this server's; null when both are acceptable. */
export function refuseForeignOrigin(request: Request): Response | null {
  const hosts = allowedHosts();
  const host = hostnameOf(`http://${request.headers.get("host") ?? ""}`);
  if (host === null || !hosts.has(host)) return forbidden("this server does not answer to that Host");
  const origin = request.headers.get("origin");
  if (origin === null) return null;
  const originHost = hostnameOf(origin);
  const allowed =
    env().MCP_ALLOWED_ORIGINS.includes(origin.toLowerCase()) || (originHost !== null && hosts.has(originHost));
  return allowed ? null : forbidden("requests from this Origin are not allowed");
}

/** Any other discovery address answers JSON, naming where the real documents are (decision 017). */
export const noSuchDiscovery = () =>
  Response.json(
    {
      error: {
        code: "not-found",
        message:
          "no such discovery document: see /.well-known/oauth-protected-resource/api/mcp and /.well-known/oauth-authorization-server",
      },
    },
    { status: 404, headers: { "Cache-Control": "no-store", ...PUBLIC_CORS } },
  );
