import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import type { AuthOptions } from "next-auth";
import { encode } from "next-auth/jwt";
import { beforeAll, describe, expect, it } from "vitest";
import { authOptions } from "@/lib/auth/sign-in/auth";
import { endSessions } from "@/lib/admin/access/people";
import { db } from "@/lib/db";
import { sessionOf } from "../support/step-up";

// next-auth's own GET /api/auth/session answers from the cookie alone. Its route handler reads the request's cookies
// through `next/headers` (a request scope a test has not got) and hands them to next-auth's core handler, which this
// calls with the same options; whatever it answers, the route answers.
const require = createRequire(import.meta.url);
const { AuthHandler } = require(path.join(path.dirname(require.resolve("next-auth")), "core/index.js")) as {
  AuthHandler: (params: {
    req: { method: string; action: string; cookies: Record<string, string>; headers: object; query: object };
    options: AuthOptions;
  }) => Promise<{ status?: number; body?: unknown; cookies?: { name: string; value: string }[] }>;
};

const SECRET = "session-endpoint-tests-only";
const suffix = randomBytes(4).toString("hex");
const tenantId = `t_sesend_${suffix}`;
const person = { id: `usr_sesend_${suffix}`, email: `sup-${suffix}@sessions.test`, role: "SUPERVISOR" as const };

beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = SECRET;
  await db.tenant.create({ data: { id: tenantId, name: `Sessions ${suffix}` } });
  await db.user.create({ data: { ...person, tenantId, name: "Sam Supervisor", passwordHash: "x" } });
});

/** GET /api/auth/session with a session cookie naming this Session row. */
async function sessionEndpoint(sessionId: string) {
  const token = await encode({
    secret: SECRET,
    token: { sub: person.id, uid: person.id, role: person.role, tenantId, sid: sessionId, email: person.email },
  });
  return AuthHandler({
    req: {
      method: "GET",
      action: "session",
      cookies: { "next-auth.session-token": token },
      headers: {},
      query: {},
    },
    options: { ...authOptions, secret: SECRET },
  });
}

describe("next-auth's session endpoint", () => {
  it("answers a session an admin ended as signed out, names no one and clears the cookie", async () => {
    const sessionId = await sessionOf(person.id);
    expect((await sessionEndpoint(sessionId)).body).toMatchObject({ user: { id: person.id, tenantId } });

    expect(await endSessions({ id: "usr_admin", tenantId }, { sessionId })).toBe(1);
    const ended = await sessionEndpoint(sessionId);
    expect(ended.body).toEqual({});
    expect(JSON.stringify(ended.body)).not.toContain(person.email);
    expect(ended.cookies).toContainEqual(expect.objectContaining({ name: "next-auth.session-token", value: "" }));
    expect(await db.session.findUniqueOrThrow({ where: { id: sessionId } })).toMatchObject({
      endedReason: "ended-by-admin",
    });
  });

  it("answers a session whose person was deactivated, or that sat idle too long, as signed out", async () => {
    const idle = await sessionOf(person.id);
    await db.session.update({ where: { id: idle }, data: { lastSeenAt: new Date(Date.now() - 3 * 3600_000) } });
    expect((await sessionEndpoint(idle)).body).toEqual({});

    const live = await sessionOf(person.id);
    await db.user.update({ where: { id: person.id }, data: { active: false } });
    expect((await sessionEndpoint(live)).body).toEqual({});
    expect(await db.session.findUniqueOrThrow({ where: { id: live } })).toMatchObject({ endedReason: "deactivated" });
  });
});
