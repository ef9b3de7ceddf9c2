import * as oauth from "oauth4webapi";
import { env } from "../../env";
import { outboundFetch, OutboundRefused } from "../../security/outbound";

// Every request to a tenant's identity provider goes through the outbound guard: the issuer is an address an
// admin typed, so it must not reach this server's loopback, private network or a metadata endpoint.

export class IssuerRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IssuerRefused";
  }
}

/**
 * An issuer is https. Plain http is accepted outside production, or for a loopback host the operator listed in
 * OUTBOUND_ALLOWED_HOSTS (a provider the tests start next to the app); anything else would carry the codes and
 * tokens across the network readable.
 */
export function checkIssuerUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new IssuerRefused("the issuer is not a URL");
  }
  if (url.search || url.hash || url.username || url.password)
    throw new IssuerRefused("the issuer has no query, fragment or credentials: give it as the provider names it");
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && plainHttpAllowed(url)) return url;
  throw new IssuerRefused("the issuer must be an https:// address");
}

function plainHttpAllowed(url: URL): boolean {
  const settings = env();
  if (settings.NODE_ENV !== "production") return true;
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const listed = settings.OUTBOUND_ALLOWED_HOSTS.includes(`${host}:${url.port || "80"}`);
  return listed && /^(127(\.\d{1,3}){3}|::1)$/.test(host);
}

/** oauth4webapi's fetch, through the outbound guard: checked addresses, no redirects, bounded answers. */
async function guardedFetch(url: string, options: oauth.CustomFetchOptions<string, unknown>): Promise<Response> {
  const body = options.body instanceof URLSearchParams ? options.body.toString() : (options.body as string | undefined);
  const answer = await outboundFetch(url, {
    method: options.method === "POST" ? "POST" : "GET",
    headers: options.headers,
    body,
    timeoutMs: 5000,
    maxBytes: 256 * 1024,
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const each of value) headers.append(name, each);
  }
  const empty = answer.status === 204 || answer.status === 304;
  return new Response(empty ? null : new Uint8Array(answer.body), { status: answer.status, headers });
}

/** What each oauth4webapi call is given: the guarded fetch, and plain http only where checkIssuerUrl allowed it. */
export function requestOptions(issuer: URL) {
  return {
    [oauth.customFetch]: guardedFetch,
    [oauth.allowInsecureRequests]: issuer.protocol === "http:",
  };
}

/** The provider's discovery document, checked to name this exact issuer. */
export async function discover(issuerText: string): Promise<oauth.AuthorizationServer> {
  const issuer = checkIssuerUrl(issuerText);
  try {
    const response = await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...requestOptions(issuer) });
    const server = await oauth.processDiscoveryResponse(issuer, response);
    for (const endpoint of [server.authorization_endpoint, server.token_endpoint]) {
      if (!endpoint)
        throw new IssuerRefused("the provider's discovery document names no authorization or token endpoint");
      checkIssuerUrl(new URL(endpoint).origin);
    }
    return server;
  } catch (error) {
    if (error instanceof IssuerRefused) throw error;
    if (error instanceof OutboundRefused) throw new IssuerRefused(error.message);
    throw new IssuerRefused(
      `the provider's discovery document at ${issuer.origin} could not be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}
