import type { NextAuthOptions } from "next-auth";

// The part of the auth configuration with no providers and no database: pages, session shape, callbacks.
// Providers and password checks live in auth.ts.

export const authConfig: Omit<NextAuthOptions, "providers"> = {
  pages: { signIn: "/login" },
  session: { strategy: "jwt", maxAge: 8 * 60 * 60 },
  callbacks: {
    jwt({ token, user }) {
      if (user) {
        token.uid = user.id;
        token.role = user.role;
        token.tenantId = user.tenantId;
      }
      return token;
    },
    session({ session, token }) {
      session.user = { ...session.user, id: token.uid, role: token.role, tenantId: token.tenantId };
      return session;
    },
  },
};
