import { encode } from "next-auth/jwt";
import type { Role } from "../../../generated/prisma/client";
import { env, servedOverHttps } from "../../../env";
import { sessionCookieName } from "../../sign-in/auth.config";

/**
 * The same session cookie a password sign-in gets from next-auth (a JWT naming the Session row), so everything after
 * sign-in (the row checked on each request, sign-out ending it) is one path whatever proved who signed in.
 */
export async function sessionCookie(person: {
  id: string;
  email: string;
  name: string;
  role: Role;
  tenantId: string;
  sessionId: string;
}): Promise<string> {
  const { NEXTAUTH_SECRET: secret, SESSION_MAX_SECONDS: maxAge } = env();
  if (!secret) throw new Error("NEXTAUTH_SECRET is not set: sessions cannot be signed");
  const token = await encode({
    secret,
    maxAge,
    token: {
      sub: person.id,
      name: person.name,
      email: person.email,
      uid: person.id,
      role: person.role,
      tenantId: person.tenantId,
      sid: person.sessionId,
    },
  });
  const secure = servedOverHttps() ? "; Secure" : "";
  return `${sessionCookieName()}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;
}
