import { encode } from "next-auth/jwt";

// Minting a session, shared by the Vitest tests (app-instances.ts, through Prisma) and the Playwright specs
// (e2e/support.ts, through their own pg pool). It imports nothing from lib/: lib/db is server-only and reads the
// app's settings, which a Playwright worker has neither of; Playwright loads this file as it loads oidc-provider.ts.

export interface SessionPerson {
  id: string;
  email: string;
  role: "AGENT" | "SUPERVISOR" | "ADMIN";
  tenantId: string;
  /** The token's `name` claim, left out unless given. */
  name?: string;
}

export interface SessionRow {
  id: string;
  userId: string;
  tenantId: string;
}

/** A real session as a sign-in makes it: `saveRow` writes its Session row, then the next-auth token standing for it. */
export async function mintSession(
  person: SessionPerson,
  { secret, sessionId, saveRow }: { secret: string; sessionId: string; saveRow: (row: SessionRow) => Promise<unknown> },
): Promise<string> {
  await saveRow({ id: sessionId, userId: person.id, tenantId: person.tenantId });
  const { id, role, tenantId, email, name } = person;
  return encode({
    secret,
    token: { sub: id, uid: id, role, tenantId, email, ...(name === undefined ? {} : { name }), sid: sessionId },
  });
}
