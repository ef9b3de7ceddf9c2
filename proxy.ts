import { NextResponse, type NextRequest } from "next/server";
import { env, servedOverHttps } from "@/lib/env";
import { API_POLICY, formTargetOf, HSTS, newNonce, pagePolicy, STATIC_SECURITY_HEADERS } from "@/lib/security/headers";
import { actionOriginAllowed, FORWARDED_HEADERS, malformedTarget } from "@/lib/security/request";

// Runs before every route but the agent REST API's four: refuses request targets no route can read,
// drops forwarded headers nobody vouches for, and sets the security headers (a per-request CSP nonce for pages, the
// Next.js documented pattern).

function refuse(status: number, code: string, message: string): NextResponse {
  return withHeaders(NextResponse.json({ error: { code, message } }, { status }), API_POLICY);
}

function withHeaders(response: NextResponse, policy: string): NextResponse {
  for (const [name, value] of Object.entries(STATIC_SECURITY_HEADERS)) response.headers.set(name, value);
  response.headers.set("Content-Security-Policy", policy);
  if (servedOverHttps()) response.headers.set("Strict-Transport-Security", HSTS);
  return response;
}

export function proxy(request: NextRequest): NextResponse {
  const raw = request.url.slice(request.nextUrl.origin.length);
  const malformed = malformedTarget(raw);
  if (malformed) return refuse(400, "request.malformed-url", `the request target has ${malformed}`);

  const headers = new Headers(request.headers);
  if (env().TRUST_PROXY === 0) for (const name of FORWARDED_HEADERS) headers.delete(name);

  // A page answers a POST only as a server action, whether it names itself in a header or in a form's fields.
  const isPage = !request.nextUrl.pathname.startsWith("/api/");
  if (
    request.method === "POST" &&
    (isPage || headers.has("next-action")) &&
    !actionOriginAllowed(headers.get("origin"), headers.get("host"))
  ) {
    return refuse(403, "origin.forbidden", "server actions are accepted only from this site");
  }

  if (!isPage) return withHeaders(NextResponse.next({ request: { headers } }), API_POLICY);
  const nonce = newNonce();
  // The consent page's form is answered with a redirect to the client, which form-action must allow.
  const formTarget =
    request.nextUrl.pathname === "/oauth/authorize"
      ? formTargetOf(request.nextUrl.searchParams.get("redirect_uri"))
      : undefined;
  const policy = pagePolicy(nonce, {
    dev: process.env.NODE_ENV === "development",
    https: servedOverHttps(),
    formTarget,
  });
  // Next.js reads the nonce from the request's CSP header and puts it on the scripts it renders.
  headers.set("Content-Security-Policy", policy);
  return withHeaders(NextResponse.next({ request: { headers } }), policy);
}

// The REST API's four routes skip it when their ids are letters, digits, `_` and `-` (decision 032): the proxy costs a
// third of an agent call's CPU, and those routes need nothing of it. Their wrapper (lib/agent-api/http.ts) checks the
// query string and sets HSTS, next.config.ts sets their CSP, and they read no forwarded header. Anything else under
// /api/v1 still comes here: a path with a `%`, so a malformed one is refused before Next.js decodes it into a bare
// 500; and a path that names no route, which Next.js answers with its not-found page, and a page takes server actions.
// The matcher must be a literal (Next.js reads it at build time).
export const config = {
  matcher: [
    {
      source:
        "/((?!_next/static|_next/image|favicon.ico|api/v1/(?:conversations|conversations/[A-Za-z0-9_-]+/tools|conversations/[A-Za-z0-9_-]+/tool-calls|tool-calls/[A-Za-z0-9_-]+)$).*)",
    },
  ],
};
