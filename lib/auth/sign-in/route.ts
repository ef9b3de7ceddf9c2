import NextAuth from "next-auth";
import { cookies } from "next/headers";
import { NextRequest } from "next/server";
import { errorResponse, readBoundedBody } from "../../http";
import { db } from "../../db";
import { countSignInThrottled } from "../../observe/metrics";
import { clientAddress } from "../../security/request";
import { servedOverHttps } from "../../env";
import { authOptions, CredentialsSchema } from "./auth";
import { sessionCookieName } from "./auth.config";
import { findUserByEmail } from "./sql";
import { attemptSucceeded, beginAuditedAttempt, signInKeys } from "../throttle";

const nextAuth = NextAuth(authOptions) as (request: NextRequest, context: AuthContext) => Promise<Response>;

export interface AuthContext {
  params: Promise<{ nextauth?: string[] }>;
}

/**
 * next-auth's reads (session, csrf token, providers, the sign-in and sign-out pages). A callback is only ever posted
 * (the credentials form): read, it would be next-auth's 500.
 */
export async function authGet(request: NextRequest, context: AuthContext): Promise<Response> {
  const [action] = (await context.params).nextauth ?? [];
  if (action === "callback") {
    return errorResponse(405, "request.method-not-allowed", "sign in by posting the sign-in form", { Allow: "POST" });
  }
  return handOver(request, context);
}

/** The callback-URL cookie, as auth.config.ts names it. */
const callbackCookie = () => (servedOverHttps() ? "__Host-next-auth.callback-url" : "next-auth.callback-url");

/** As next-auth judges a callback URL: a path of this site, or an absolute http(s) URL. */
function isHttpCallback(value: string, base: string): boolean {
  try {
    return /^https?:$/.test(new URL(value, value.startsWith("/") ? base : undefined).protocol);
  } catch {
    return false;
  }
}

/**
 * The request to next-auth, without a callback URL it would refuse (in the query, or in its cookie, which next-auth
 * reads from the request's cookie store): it answers one with a 500 "server configuration" page. Such a value is a
 * client's, so it is dropped, the cookie cleared in the browser too, and the request goes on as if none was sent.
 */
async function handOver(request: NextRequest, context: AuthContext): Promise<Response> {
  const foreign = (value: string | null | undefined) => value != null && !isHttpCallback(value, request.nextUrl.origin);
  // next-auth reads the query from `nextUrl`, this request's own.
  if (foreign(request.nextUrl.searchParams.get("callbackUrl"))) request.nextUrl.searchParams.delete("callbackUrl");
  const jar = await cookies();
  if (!foreign(jar.get(callbackCookie())?.value)) return nextAuth(request, context);
  jar.delete(callbackCookie());
  const response = await nextAuth(request, context);
  const secure = servedOverHttps() ? "; Secure" : "";
  response.headers.append(
    "Set-Cookie",
    `${callbackCookie()}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax${secure}`,
  );
  return response;
}

// next-auth reads a JSON body when the content type merely contains "application/json", a form's fields with the
// last of a repeated name winning, and its action from the decoded path. So the form is read here once, exactly:
// one content type, each field once, and the request next-auth sees carries this parse and nothing else.
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const MAX_FORM_BYTES = 8 * 1024;
const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** next-auth's own client posts forms; anything else is refused before its parser sees it. */
export async function authPost(request: NextRequest, context: AuthContext): Promise<Response> {
  if (!FORM_TYPE.test(request.headers.get("content-type") ?? "")) {
    return errorResponse(415, "request.unsupported-type", "send the form as application/x-www-form-urlencoded");
  }
  const body = await readBoundedBody(request, MAX_FORM_BYTES);
  if (body.truncated) {
    return errorResponse(413, "request.too-large", `the form is larger than ${MAX_FORM_BYTES} bytes`, {
      Connection: "close",
    });
  }
  const form = new URLSearchParams(new TextDecoder().decode(body.bytes));
  const repeated = [...new Set(form.keys())].find((name) => form.getAll(name).length > 1);
  if (repeated) return errorResponse(400, "request.repeated-field", `send the field "${repeated}" once`);
  // The segments next-auth acts on, already decoded: `%63redentials` and `credentials` are the same route here.
  const segments = (await context.params).nextauth ?? [];
  if (!segments.every((segment) => SEGMENT.test(segment))) {
    return errorResponse(404, "not-found", "no such sign-in route");
  }
  // next-auth's browser client reports its own failed fetches here, and anyone can post any code and text as one:
  // they would be error lines of a stranger's wording in the operators' log (and said no more than "[object Object]").
  if (segments[0] === "_log") return new Response(null, { status: 204 });
  const headers = new Headers(request.headers);
  headers.set("content-type", "application/x-www-form-urlencoded");
  headers.delete("content-length");
  const forwarded = new NextRequest(request.url, { method: "POST", headers, body: form.toString() });
  if (segments[0] === "callback") return throttledSignIn(forwarded, context, form);
  return handOver(forwarded, context);
}

/**
 * A password sign-in under the throttle: refused with 429 and Retry-After while the account or the address is
 * locked, counted otherwise. The answer is the same whether or not the account exists.
 */
async function throttledSignIn(request: NextRequest, context: AuthContext, form: URLSearchParams): Promise<Response> {
  const parsed = CredentialsSchema.shape.email.safeParse(form.get("email") ?? "");
  const tried = { email: parsed.success ? parsed.data : "(invalid)", address: clientAddress(request.headers) };
  const keys = signInKeys(tried);
  const attempt = await beginAuditedAttempt(keys, {
    action: "sign-in.throttled",
    detail: tried,
    // In the account's tenant when the email is a person's, else in the "(none)" tenant.
    who: async () => {
      const user = await findUserByEmail(db, tried.email);
      return { tenantId: user?.tenantId ?? "(none)", actorId: user?.id ?? "(anonymous)" };
    },
  });
  if (!attempt.allowed) {
    countSignInThrottled();
    const seconds = attempt.retryAfterSeconds;
    // next-auth's client reads `url` and its `error` parameter; the login form shows when to try again.
    const url = new URL(`/login?error=throttled:${seconds}`, request.url).toString();
    return Response.json(
      {
        url,
        error: {
          code: "sign-in.throttled",
          message: `too many sign-in attempts; try again in ${seconds} s`,
          retry_after_seconds: seconds,
        },
      },
      { status: 429, headers: { "Retry-After": String(seconds), "Cache-Control": "no-store" } },
    );
  }
  const response = await handOver(request, context);
  const signedIn = response.headers
    .getSetCookie()
    .some((cookie) => cookie.startsWith(`${sessionCookieName()}=`) && !cookie.startsWith(`${sessionCookieName()}=;`));
  if (signedIn) await attemptSucceeded(keys);
  return response;
}
