import { describe, expect, it } from "vitest";
import { createAgentKey } from "@/lib/admin/access/agent-keys";
import {
  passkeyRegistrationOptions,
  removeOwnPasskey,
  removePersonPasskeys,
} from "@/lib/auth/step-up/passkeys/passkeys";
import { db } from "@/lib/db";
import { noProof, provedFor } from "../support/step-up";
import { createWorld, type World } from "../support/world";

// The step-up primitive as the actions use it (decision 014): passkeys are added and removed only with a proof made
// for exactly that change in the same session, audited, the owner emailed; a proof covers each of its items once.
// The same attacks over HTTP against the production build are in tests/hardening/step-up.test.ts.

async function owner(world: World) {
  return db.user.findUniqueOrThrow({
    where: { id: world.users.supervisor },
    select: { id: true, email: true, name: true, tenantId: true },
  });
}

const trail = async (world: World) => ({
  passkeys: await db.passkey.findMany({ where: { userId: world.users.supervisor }, select: { id: true } }),
  audit: await db.auditLog.findMany({
    where: { tenantId: world.tenantId, action: { startsWith: "passkey." } },
    select: { action: true, actorId: true },
  }),
  mail: await db.outboxMessage.findMany({
    where: { tenantId: world.tenantId, kind: { startsWith: "passkey." } },
    select: { kind: true, recipient: true },
  }),
});

async function withPasskey(world: World, id = `pk_${world.users.supervisor}`) {
  await db.passkey.create({
    data: { id, userId: world.users.supervisor, publicKey: Buffer.from([1, 2, 3]), name: "Laptop" },
  });
  return id;
}

describe("passkeys need a step-up with a factor the person already has", () => {
  it("registration options are refused without an enrolment proof from this session, and given with one", async () => {
    const world = await createWorld();
    const person = await owner(world);
    const proof = await provedFor(person.id, { kind: "passkey.enrol" });
    const otherSession = await provedFor(person.id, { kind: "passkey.enrol" });
    const wrongKind = await provedFor(person.id, { kind: "admin.key-created", userId: world.users.agent });
    for (const holder of [
      await noProof(person.id),
      { ...otherSession, sessionId: proof.sessionId },
      { ...wrongKind, sessionId: wrongKind.sessionId },
    ]) {
      expect(await passkeyRegistrationOptions(person, holder)).toBeNull();
    }
    expect((await db.user.findUniqueOrThrow({ where: { id: person.id } })).webauthnChallenge).toBeNull();
    expect(await passkeyRegistrationOptions(person, proof)).toMatchObject({ challenge: expect.any(String) });
  });

  it("removing one's own passkey consumes a proof for that passkey, is audited and emails the owner; without one nothing changes", async () => {
    const world = await createWorld();
    const person = await owner(world);
    const passkeyId = `pk_${person.id}`;
    // Proofs made before the passkey exists (a person with a passkey proves with it, not the password).
    const forAnother = await provedFor(person.id, { kind: "passkey.remove", passkeyId: "pk_another" });
    const proof = await provedFor(person.id, { kind: "passkey.remove", passkeyId });
    await withPasskey(world, passkeyId);
    const before = await trail(world);
    for (const holder of [await noProof(person.id), forAnother, { ...proof, sessionId: forAnother.sessionId }]) {
      expect(await removeOwnPasskey(person, holder, passkeyId)).toBe("step-up-required");
    }
    expect(await trail(world)).toEqual(before);

    expect(await removeOwnPasskey(person, proof, passkeyId)).toBe("ok");
    expect(await trail(world)).toEqual({
      passkeys: [],
      audit: [{ action: "passkey.removed", actorId: person.id }],
      mail: [{ kind: "passkey.removed", recipient: person.email }],
    });
  });

  it("an admin removes a person's passkeys only with the admin's own proof for that person; audited, the owner emailed", async () => {
    const world = await createWorld();
    const person = await owner(world);
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const forSomeoneElse = await provedFor(admin.id, { kind: "admin.passkeys-removed", userId: world.users.agent });
    const theOwnersProof = await provedFor(person.id, { kind: "admin.passkeys-removed", userId: person.id });
    await withPasskey(world);
    const before = await trail(world);
    for (const holder of [await noProof(admin.id), forSomeoneElse, { ...theOwnersProof, userId: admin.id }]) {
      expect(await removePersonPasskeys(admin, holder, person.id)).toBe("step-up-required");
    }
    expect(await trail(world)).toEqual(before);

    const proof = await provedFor(admin.id, { kind: "admin.passkeys-removed", userId: person.id });
    expect(await removePersonPasskeys({ ...admin, tenantId: world.otherTenantId }, proof, person.id)).toBe("not-found");
    expect(await removePersonPasskeys(admin, proof, person.id)).toBe("ok");
    expect(await trail(world)).toEqual({
      passkeys: [],
      audit: [{ action: "passkey.removed-by-admin", actorId: admin.id }],
      mail: [{ kind: "passkey.removed-by-admin", recipient: person.email }],
    });
  });
});

describe("a proof covers each of its items once", () => {
  it("the same proof cannot create a second key; a proof for one agent, or for another kind of change, creates no key", async () => {
    const world = await createWorld();
    const admin = { id: world.users.admin, tenantId: world.tenantId };
    const keys = () => db.apiKey.count({ where: { tenantId: world.tenantId } });
    const before = await keys();
    expect(await createAgentKey(admin, world.users.agent2, await noProof(admin.id))).toEqual({
      ok: false,
      problem: "step-up-required",
    });
    const proof = await provedFor(admin.id, { kind: "admin.key-created", userId: world.users.agent2 });
    expect(await createAgentKey(admin, world.users.agent, proof)).toEqual({ ok: false, problem: "step-up-required" });
    // A proof for another kind of change about the same agent (granting refunds) mints no key either.
    const grant = await provedFor(admin.id, { kind: "admin.refunds-granted", userId: world.users.agent2 });
    expect(await createAgentKey(admin, world.users.agent2, grant)).toEqual({ ok: false, problem: "step-up-required" });
    expect(await createAgentKey(admin, world.users.agent2, proof)).toMatchObject({ ok: true });
    expect(await createAgentKey(admin, world.users.agent2, proof)).toEqual({ ok: false, problem: "step-up-required" });
    expect(await keys()).toBe(before + 1);
  });
});
