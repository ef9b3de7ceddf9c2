import { z } from "zod";
import { env } from "../../../env";
import { logError } from "../../../observe/log";
import { clientAddress } from "../../../security/request";
import { safeReturnPath } from "../../guards";
import { ATTEMPT_SECONDS, attemptCookie, attemptCookieName, openAttempt } from "./attempt";
import { beginSsoSignIn, finishSsoSignIn } from "./sign-in";

// The two edges of a single sign-on: GET /api/sso/start (from the sign-in page) and GET /api/sso/callback (the
// provider sends the browser back). Every failure lands on the sign-in page with its code, which says what to do.

const StartSchema = z.object({
  email: z.string().trim().toLowerCase().email().max(200).optional(),
  tenant: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/)
    .optional(),
  next: z.string().max(2000).optional(),
});

/** Where people reach this app: NEXTAUTH_URL, else (development) the request's own origin. */
const appOrigin = (request: Request) => new URL(env().NEXTAUTH_URL ?? request.url).origin;

const toLogin = (request: Request, code: string) =>
  new Response(null, {
    status: 303,
    headers: {
      Location: new URL(`/login?error=${encodeURIComponent(code)}`, appOrigin(request)).href,
      "Cache-Control": "no-store",
      "Set-Cookie": attemptCookie("", 0),
    },
  });

/** An unexpected failure is logged for the operators and answered in words, never with a stack trace. */
const orLogged =
  (event: string, handler: (request: Request) => Promise<Response>) =>
  async (request: Request): Promise<Response> => {
    try {
      return await handler(request);
    } catch (error) {
      logError(event, error);
      return toLogin(request, "sso.failed");
    }
  };

export const ssoStart = orLogged("sso.start", async (request) => {
  const query = Object.fromEntries(new URL(request.url).searchParams);
  const parsed = StartSchema.safeParse(query);
  if (!parsed.success || (!parsed.data.email && !parsed.data.tenant)) return toLogin(request, "sso.invalid-request");
  const begun = await beginSsoSignIn(
    { email: parsed.data.email, tenantId: parsed.data.tenant },
    appOrigin(request),
    safeReturnPath(parsed.data.next),
  );
  if (!begun.ok) return toLogin(request, begun.code);
  return new Response(null, {
    status: 303,
    headers: {
      Location: begun.location,
      "Cache-Control": "no-store",
      "Set-Cookie": attemptCookie(begun.attempt, ATTEMPT_SECONDS),
    },
  });
});

function readCookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

export const ssoCallback = orLogged("sso.callback", async (request) => {
  const attempt = openAttempt(readCookie(request, attemptCookieName()));
  const finished = await finishSsoSignIn(new URL(request.url), attempt, appOrigin(request), {
    address: clientAddress(request.headers),
    userAgent: request.headers.get("user-agent") ?? "",
  });
  if (!finished.ok) return toLogin(request, finished.code);
  const headers = new Headers({
    Location: new URL(finished.returnTo, appOrigin(request)).href,
    "Cache-Control": "no-store",
  });
  headers.append("Set-Cookie", attemptCookie("", 0));
  headers.append("Set-Cookie", finished.cookie);
  return new Response(null, { status: 303, headers });
});
