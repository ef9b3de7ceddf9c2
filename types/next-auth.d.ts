import type { Role } from "@/lib/generated/prisma/client";

declare module "next-auth" {
  interface User {
    role: Role;
    tenantId: string;
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
  }
}
