import type { NextAuthOptions } from "next-auth";
import { decode } from "next-auth/jwt";
import { cookies } from "next/headers";
import { cache } from "react";
import CredentialsProvider from "next-auth/providers/credentials";
import { z } from "zod";
import { db } from "../../db";
import { env } from "../../env";
import { logError } from "../../observe/log";
import { clientAddress } from "../../security/request";
import { authConfig, sessionCookieName } from "./auth.config";
import { hashPassword, verifyPassword } from "../password-hash";
import { endSession, sessionUser, type SessionUser } from "../sessions";
import { startPasswordSession, SSO_REQUIRED } from "../sso/password-policy";
import { findUserByEmail, rehashPassword } from "./sql";

export type { SessionUser } from "../sessions";

export const CredentialsSchema = z.object({
  email: z.string().trim().toLowerCase().email().max(200),
  password: z.string().min(1).max(200),
});

/**
 * Providers are listed here; adding an OIDC provider (for example `next-auth/providers/okta` or a generic
 * `{ type: "oauth", wellKnown, clientId, clientSecret }`) is one more entry plus a `signIn` callback that maps
 * the verified email to an existing user.
 */
export const authOptions: NextAuthOptions = {
  ...authConfig,
  // The cookie lives as long as the longest session may; the Session row decides whether it still counts.
  session: { strategy: "jwt", maxAge: env().SESSION_MAX_SECONDS },
  logger: {
    // A session cookie that does not decrypt is a client's (or an attacker's) doing: it reads as signed out,
    // and leaves no stack trace in the operators' log.
    error(code, metadata) {
      if (code === "JWT_SESSION_ERROR") return;
      logError(
        `auth.${code.toLowerCase()}`,
        metadata instanceof Error ? metadata : ((metadata as { error?: unknown }).error ?? metadata),
      );
    },
    warn() {},
    debug() {},
  },
  callbacks: {
    ...authConfig.callbacks,
    // next-auth's own GET /api/auth/session reads only the cookie: there too a session whose row has ended or lapsed
    // is signed out. What this throws, next-auth answers with `{}` and a cleared cookie (and logs as JWT_SESSION_ERROR,
    // which the logger above drops).
    async session(params) {
      if (!(await sessionUser(params.token.sid, { touch: false }))) throw new Error("the session has ended");
      return authConfig.callbacks!.session!(params);
    },
  },
  events: {
    async signOut({ token }) {
      await endSession(token?.sid, "signed-out");
    },
  },
  providers: [
    CredentialsProvider({
      name: "Email and password",
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      async authorize(raw, request) {
        const parsed = CredentialsSchema.safeParse(raw);
        if (!parsed.success) return null;
        const user = await findUserByEmail(db, parsed.data.email);
        const verified = await verifyPassword(parsed.data.password, user?.passwordHash ?? null);
        if (!user || !user.active || !verified.matches) return null;
        const headers = new Headers(request.headers as Record<string, string>);
        const sessionId = await startPasswordSession(user, {
          address: clientAddress(headers),
          userAgent: headers.get("user-agent") ?? "",
        });
        // Told only to someone who knew the password: their tenant signs in through its identity provider.
        if (!sessionId) throw new Error(SSO_REQUIRED);
        if (verified.needsUpgrade) {
          await rehashPassword(db, user.id, await hashPassword(parsed.data.password));
        }
        return { id: user.id, email: user.email, name: user.name, role: user.role, tenantId: user.tenantId, sessionId };
      },
    }),
  ],
};

/**
 * The signed-in person as the database knows them now, through their live Session row: a session that was
 * ended (sign-out, an admin, a change to the person) or lapsed is signed out, whatever the cookie still says.
 */
export async function currentUser(): Promise<SessionUser | null> {
  return (await currentSession())?.user ?? null;
}

/**
 * The signed-in person and the id of the session they are signed in through (what a step-up proof is bound to).
 * Read once per page render (the layout and the page share it); an action or a route reads it afresh each call.
 */
export const currentSession = cache(async (): Promise<{ user: SessionUser; sessionId: string } | null> => {
  const sessionId = await currentSessionId();
  const user = await sessionUser(sessionId);
  return user && sessionId ? { user, sessionId } : null;
});

/**
 * `currentUser` for a response that stays open (a live event stream): also a check to repeat while it is open,
 * false once the session has ended or lapsed, so the stream closes with it.
 */
export async function currentStreamUser(): Promise<{ user: SessionUser; stillLive: () => Promise<boolean> } | null> {
  const sessionId = await currentSessionId();
  const user = await sessionUser(sessionId);
  if (!user) return null;
  return { user, stillLive: async () => (await sessionUser(sessionId, { touch: false }))?.id === user.id };
}

async function currentSessionId(): Promise<string | undefined> {
  const cookie = (await cookies()).get(sessionCookieName())?.value;
  if (!cookie) return undefined;
  // The session id stays inside the encrypted cookie; it is never handed to the page's scripts.
  const token = await decode({ token: cookie, secret: env().NEXTAUTH_SECRET ?? "" }).catch(() => null);
  return token?.sid;
}
