import { describe, expect, it } from "vitest";
import { db } from "@/lib/db";
import { hashPassword, verifyPassword } from "@/lib/auth/password-hash";
import { changeOwnPassword } from "@/lib/auth/sign-in/password-change";
import { sessionUser, startSession } from "@/lib/auth/sessions";
import { createWorld } from "../support/world";

// A person changes their own password from the settings page; this is the function its server action calls.

const browser = { address: "203.0.113.9", userAgent: "test" };
const PASSWORD = "the-current-password";

async function withPassword(userId: string) {
  return db.user.update({ where: { id: userId }, data: { passwordHash: await hashPassword(PASSWORD) } });
}

describe("changing one's own password", () => {
  it("needs the current password, stores an argon2id hash of the new one and ends every session of the person", async () => {
    const world = await createWorld();
    const person = await withPassword(world.users.supervisor);
    const other = await db.user.findUniqueOrThrow({ where: { id: world.users.agent } });
    const here = await startSession(person, browser);
    const elsewhere = await startSession(person, browser);
    const someoneElse = await startSession(other, browser);

    expect(await changeOwnPassword(person, here, "not-the-password", "a-much-longer-secret")).toEqual({
      kind: "wrong",
    });
    expect(await sessionUser(here)).not.toBeNull();
    expect(await changeOwnPassword(person, here, PASSWORD, "short")).toMatchObject({ kind: "weak" });
    expect(await changeOwnPassword(person, here, PASSWORD, PASSWORD)).toMatchObject({ kind: "weak" });
    expect((await db.user.findUniqueOrThrow({ where: { id: person.id } })).passwordHash).toBe(person.passwordHash);

    expect(await changeOwnPassword(person, here, PASSWORD, "a-much-longer-secret")).toEqual({ kind: "changed" });
    const stored = (await db.user.findUniqueOrThrow({ where: { id: person.id } })).passwordHash!;
    expect(stored.startsWith("$argon2id$")).toBe(true);
    expect((await verifyPassword("a-much-longer-secret", stored)).matches).toBe(true);
    expect((await verifyPassword(PASSWORD, stored)).matches).toBe(false);
    expect(await sessionUser(here)).toBeNull();
    expect(await sessionUser(elsewhere)).toBeNull();
    expect(await sessionUser(someoneElse)).not.toBeNull();
    expect(await db.session.findUniqueOrThrow({ where: { id: here } })).toMatchObject({
      endedReason: "password-changed",
    });
    // The change is evidence in the tenant's audit log, with the session it was made in.
    const audited = await db.auditLog.findMany({ where: { tenantId: world.tenantId, action: "password.changed" } });
    expect(audited.map((row) => [row.actorId, row.detail])).toEqual([[person.id, { session_id: here }]]);
  });

  it("a stolen cookie guesses the current password no faster than the sign-in form lets anyone", async () => {
    const world = await createWorld();
    const person = await withPassword(world.users.agent);
    const stolen = await startSession(person, browser);
    const answers = [];
    for (let attempt = 0; attempt < 5; attempt++)
      answers.push((await changeOwnPassword(person, stolen, `guess-${attempt}`, "a-much-longer-secret")).kind);
    expect(answers).toEqual(["wrong", "wrong", "wrong", "wrong", "throttled"]);
    // Locked: even the right password waits, and nothing changed.
    expect((await changeOwnPassword(person, stolen, PASSWORD, "a-much-longer-secret")).kind).toBe("throttled");
    expect((await db.user.findUniqueOrThrow({ where: { id: person.id } })).passwordHash).toBe(person.passwordHash);
    // The lock is evidence in the tenant's audit log, with the session it was guessed in.
    const locks = await db.auditLog.findMany({ where: { tenantId: world.tenantId, action: "password.throttled" } });
    expect(locks.map((row) => [row.actorId, row.detail])).toEqual([
      [person.id, { scope: "session", session_id: stolen, failures: 4, locked_seconds: 2 }],
    ]);
  });
});
