import "server-only";
import NextAuth from "next-auth";
import { errorResponse } from "../agent-api/http";
import { db } from "../db";
import { countSignInThrottled } from "../metrics";
import { clientAddress } from "../security/request";
import { authOptions, CredentialsSchema } from "./auth";
import { sessionCookieName } from "./auth.config";
import { findUserByEmail, insertAuditLogs } from "./sql";
import { attemptSucceeded, beginAttempt, type Locked, type ThrottleKeys } from "./throttle";

const nextAuth = NextAuth(authOptions) as (request: Request, context: unknown) => Promise<Response>;

export function authGet(request: Request, context: unknown): Promise<Response> {
  return nextAuth(request, context);
}

/** next-auth's own client posts forms; any other body would reach its parser and come back as a 500. */
export async function authPost(request: Request, context: unknown): Promise<Response> {
  const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    return errorResponse(415, "request.unsupported-type", "send the form as application/x-www-form-urlencoded");
  }
  if (!new URL(request.url).pathname.endsWith("/callback/credentials")) return nextAuth(request, context);
  return throttledSignIn(request, context);
}

/**
 * A password sign-in under the throttle: refused with 429 and Retry-After while the account or the address is
 * locked, counted otherwise. The answer is the same whether or not the account exists.
 */
async function throttledSignIn(request: Request, context: unknown): Promise<Response> {
  const form = new URLSearchParams(await request.clone().text());
  const parsed = CredentialsSchema.shape.email.safeParse(form.get("email") ?? "");
  const keys: ThrottleKeys = {
    email: parsed.success ? parsed.data : "(invalid)",
    address: clientAddress(request.headers),
  };
  const attempt = await beginAttempt(keys);
  if (attempt.locked?.length) await auditLocks(keys, attempt.locked);
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
  const response = await nextAuth(request, context);
  const signedIn = response.headers
    .getSetCookie()
    .some((cookie) => cookie.startsWith(`${sessionCookieName()}=`) && !cookie.startsWith(`${sessionCookieName()}=;`));
  if (signedIn) await attemptSucceeded(keys);
  return response;
}

/** Each lock is evidence: in the account's tenant when the email is a person's, else in the "(none)" tenant. */
async function auditLocks(keys: ThrottleKeys, locked: Locked[]): Promise<void> {
  const user = await findUserByEmail(db, keys.email);
  await insertAuditLogs(
    db,
    locked.map((lock) => ({
      tenantId: user?.tenantId ?? "(none)",
      actorId: user?.id ?? "(anonymous)",
      action: "sign-in.throttled",
      detail: {
        scope: lock.scope,
        email: keys.email,
        address: keys.address,
        failures: lock.failures,
        locked_seconds: lock.seconds,
      },
    })),
  );
}
