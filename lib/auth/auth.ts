import "server-only";
import bcrypt from "bcryptjs";
import type { NextAuthOptions } from "next-auth";
import { getServerSession } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { z } from "zod";
import { db } from "../db";
import { logError } from "../log";
import type { Role } from "../generated/prisma/client";
import { authConfig } from "./auth.config";

const CredentialsSchema = z.object({ email: z.string().trim().toLowerCase().email().max(200), password: z.string().min(1).max(200) });

// A hash to compare against when the email is unknown, so both paths cost one bcrypt comparison.
const NO_USER_HASH = "$2b$10$rigCtf.3cvM6A3mGseH1oOj5JhzQv8BbRBdNCwTZ7wcQ83cFUifqy";

/**
 * Providers are listed here; adding an OIDC provider (for example `next-auth/providers/okta` or a generic
 * `{ type: "oauth", wellKnown, clientId, clientSecret }`) is one more entry plus a `signIn` callback that maps
 * the verified email to an existing user.
 */
export const authOptions: NextAuthOptions = {
  ...authConfig,
  logger: {
    // A session cookie that does not decrypt is a client's (or an attacker's) doing: it reads as signed out,
    // and leaves no stack trace in the operators' log.
    error(code, metadata) {
      if (code === "JWT_SESSION_ERROR") return;
      logError(`auth.${code.toLowerCase()}`, metadata instanceof Error ? metadata : (metadata as { error?: unknown }).error ?? metadata);
    },
    warn() {},
    debug() {},
  },
  providers: [
    CredentialsProvider({
      name: "Email and password",
      credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
      async authorize(raw) {
        const parsed = CredentialsSchema.safeParse(raw);
        if (!parsed.success) return null;
        const user = await db.user.findUnique({
          where: { email: parsed.data.email },
          select: { id: true, email: true, name: true, role: true, tenantId: true, passwordHash: true, active: true },
        });
        const matches = await bcrypt.compare(parsed.data.password, user?.passwordHash ?? NO_USER_HASH);
        if (!user || !user.active || !matches) return null;
        return { id: user.id, email: user.email, name: user.name, role: user.role, tenantId: user.tenantId };
      },
    }),
  ],
};

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  tenantId: string;
}

/**
 * The signed-in person as the database knows them now: a deactivated user or a changed role takes effect on
 * the next request, whatever the session cookie still says.
 */
export async function currentUser(): Promise<SessionUser | null> {
  const session = await getServerSession(authOptions);
  const id = session?.user?.id;
  if (!id) return null;
  const user = await db.user.findUnique({ where: { id }, select: { id: true, email: true, name: true, role: true, tenantId: true, active: true } });
  if (!user || !user.active) return null;
  const { active: _active, ...rest } = user;
  return rest;
}
