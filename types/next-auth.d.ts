import type { Role } from "@/lib/generated/prisma/client";

declare module "next-auth" {
  interface User {
    role: Role;
    tenantId: string;
    /** The Session row made at sign-in. */
    sessionId: string;
  }
  interface Session {
    user: { id: string; role: Role; tenantId: string; email?: string | null; name?: string | null };
  }
}

declare module "next-auth/jwt" {
  interface JWT {
    uid: string;
    role: Role;
    tenantId: string;
    /** The Session row this cookie stands for; the cookie is worth nothing once that row has ended. */
    sid?: string;
  }
}
