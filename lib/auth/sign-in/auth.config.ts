import type { CookieOption, NextAuthOptions } from "next-auth";
import { servedOverHttps } from "../../env";

// The part of the auth configuration with no providers and no database: pages, session shape, callbacks.
// Providers and password checks live in auth.ts.

/** The name of the session cookie, as next-auth writes it. */
export const sessionCookieName = () =>
  servedOverHttps() ? "__Host-next-auth.session-token" : "next-auth.session-token";

/**
 * Over HTTPS every auth cookie is `__Host-`: Secure, Path=/, no Domain, so neither a sibling subdomain nor a
 * plain-HTTP page can set or shadow it. Over plain HTTP (development) next-auth's own names stay.
 */
function hostCookies(): NextAuthOptions["cookies"] {
  if (!servedOverHttps()) return undefined;
  const cookie = (name: string, httpOnly = true): CookieOption => ({
    name: `__Host-next-auth.${name}`,
    options: { httpOnly, sameSite: "lax", path: "/", secure: true },
  });
  return {
    sessionToken: cookie("session-token"),
    csrfToken: cookie("csrf-token"),
    callbackUrl: cookie("callback-url"),
  };
}

export const authConfig: Omit<NextAuthOptions, "providers"> = {
  pages: { signIn: "/login" },
  cookies: hostCookies(),
  callbacks: {
    jwt({ token, user }) {
      if (user) {
        token.uid = user.id;
        token.role = user.role;
        token.tenantId = user.tenantId;
        token.sid = user.sessionId;
      }
      return token;
    },
    session({ session, token }) {
      session.user = { ...session.user, id: token.uid, role: token.role, tenantId: token.tenantId };
      return session;
    },
  },
};
