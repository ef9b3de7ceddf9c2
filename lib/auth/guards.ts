import { redirect } from "next/navigation";
import type { z } from "zod";
import type { Role } from "../generated/prisma/client";
import { describeIssue } from "../issue-words";
import { logError } from "../observe/log";
import { currentSession, type SessionUser } from "./sign-in/auth";

/**
 * For pages: the signed-in user with one of these roles, else off to sign-in (and back to `returnTo` after it),
 * or home for a wrong role, which names the page and whose it is.
 */
export async function requireRole(roles: readonly Role[], returnTo?: string): Promise<SessionUser> {
  return (await requireSession(roles, returnTo)).user;
}

/** `requireRole` with the id of the session the person is signed in through (what a step-up proof is bound to). */
export async function requireSession(
  roles: readonly Role[],
  returnTo?: string,
): Promise<{ user: SessionUser; sessionId: string }> {
  const signedIn = await currentSession();
  if (!signedIn) redirect(returnTo ? `/login?next=${encodeURIComponent(returnTo)}` : "/login");
  if (!roles.includes(signedIn.user.role)) {
    const page = returnTo ? `denied=${encodeURIComponent(returnTo.split("?")[0])}&` : "denied=1&";
    redirect(`/?${page}for=${roles.join(",")}`);
  }
  return signedIn;
}

/** Every role: for what anyone signed in may do. */
export const EVERY_ROLE = ["AGENT", "SUPERVISOR", "ADMIN"] as const satisfies readonly Role[];

export type ActionResult<T = undefined> = { ok: true; data: T } | { ok: false; code: string; message: string };

/** The session an action runs in; a step-up proof counts only in the session that made it. */
export interface ActionSession {
  id: string;
}

/**
 * Every server action is built with this: session first, then role, then the input parsed with zod, then the
 * handler. Expected failures come back as results; anything else is logged and answered generically.
 */
export function authedAction<S extends z.ZodType, T>(
  schema: S,
  roles: readonly Role[],
  handler: (input: z.infer<S>, user: SessionUser, session: ActionSession) => Promise<ActionResult<T>>,
): (input: z.input<S>) => Promise<ActionResult<T>> {
  return async (input) => {
    const signedIn = await currentSession();
    if (!signedIn) return { ok: false, code: "auth.required", message: "Sign in first." };
    const { user, sessionId } = signedIn;
    if (!roles.includes(user.role)) return { ok: false, code: "auth.forbidden", message: "Your role cannot do this." };
    const parsed = schema.safeParse(input);
    if (!parsed.success) {
      const problems = parsed.error.issues.flatMap((issue) => describeIssue(issue, input));
      const said = [...new Set(problems.map(({ path, problem }) => `${path} ${problem}`))].slice(0, 5);
      return { ok: false, code: "input.invalid", message: `Check these fields: ${said.join("; ")}.` };
    }
    try {
      return await handler(parsed.data, user, { id: sessionId });
    } catch (error) {
      logError("action.unhandled", error, { userId: user.id });
      return {
        ok: false,
        code: "host.error",
        message: "Something went wrong on our side; nothing was changed. Try again.",
      };
    }
  };
}

/** Where to go after sign-in: only a path on this site, so a crafted `next` cannot send anyone elsewhere. */
export function safeReturnPath(next: string | undefined): string {
  return next && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : "/";
}
