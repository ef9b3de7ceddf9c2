import { randomBytes } from "node:crypto";
import bcrypt from "bcryptjs";
import { describe, expect, it, vi } from "vitest";
import { db } from "@/lib/db";
import { INSTANCE_SECRET, personCookie } from "../support/app-instances";
import { jar } from "../support/cookie-jar";
import { registrationFor } from "../support/step-up";
import { createWorld, type World } from "../support/world";

// Registering a passkey through the server actions the settings page calls, with a software authenticator. A
// credential id is one row for the whole host: a registration presenting one already registered, the person's own
// or anyone else's, is refused in words and writes nothing; the other person's row stays exactly theirs.

vi.mock("next/headers", async () => (await import("../support/cookie-jar")).nextHeadersMock());
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
process.env.NEXTAUTH_SECRET = INSTANCE_SECRET;
const { passwordStepUpAction } = await import("@/lib/auth/step-up/actions");
const { passkeyRegistrationOptionsAction, registerPasskeyAction } = await import("@/lib/auth/step-up/passkeys/actions");

const PASSWORD = "the-supervisors-password";

/** The supervisor with a known password, signed in (the browser's cookie in the jar). */
async function signedInSupervisor(world: World) {
  await db.user.update({
    where: { id: world.users.supervisor },
    data: { passwordHash: bcrypt.hashSync(PASSWORD, 4) },
    select: { id: true },
  });
  jar.cookie = await personCookie(world.users.supervisor, "SUPERVISOR");
}

/** An enrolment proof made with the password, as the settings page makes it before asking for options. */
async function enrolProof(): Promise<string> {
  const proved = await passwordStepUpAction({ purpose: { kind: "passkey.enrol" }, password: PASSWORD });
  if (!proved.ok) throw new Error(`step-up refused: ${proved.code} ${proved.message}`);
  return proved.data.proofId;
}

/** Options for the proof, answered by a software authenticator under `credentialId`, and sent to be stored. */
async function register(proofId: string, name: string, credentialId?: string) {
  const options = await passkeyRegistrationOptionsAction({ proofId });
  if (!options.ok) throw new Error(`options refused: ${options.code} ${options.message}`);
  const response = registrationFor(options.data, credentialId);
  return registerPasskeyAction({
    proofId,
    response: response as unknown as Parameters<typeof registerPasskeyAction>[0]["response"],
    name,
  });
}

/** Every passkey row, audit row and email of both tenants about passkeys, and whether the proofs are still unused. */
const trail = async (world: World, proofIds: string[]) => ({
  passkeys: await db.passkey.findMany({
    where: { user: { tenantId: { in: [world.tenantId, world.otherTenantId] } } },
    select: { id: true, userId: true, publicKey: true, counter: true, name: true },
    orderBy: { id: "asc" },
  }),
  audit: await db.auditLog.findMany({
    where: { tenantId: { in: [world.tenantId, world.otherTenantId] }, action: { startsWith: "passkey." } },
    select: { tenantId: true, action: true, actorId: true, detail: true },
  }),
  mail: await db.outboxMessage.findMany({
    where: { tenantId: { in: [world.tenantId, world.otherTenantId] }, kind: { startsWith: "passkey." } },
    select: { kind: true, recipient: true },
  }),
  used: await db.stepUpProof.findMany({ where: { id: { in: proofIds } }, select: { id: true, usedFor: true } }),
});

const REGISTERED_ELSEWHERE = {
  ok: false,
  code: "passkey.registered-elsewhere",
  message:
    "This passkey belongs to another account, so it cannot be added to yours. Create a new passkey on this device, or use a different security key.",
};

describe("a registration presenting a credential id that is already registered", () => {
  it("another person's, in this tenant or another: refused without naming them, nothing written, their row untouched; the proof stays good", async () => {
    const world = await createWorld();
    const others = [world.users.admin, world.users.otherSupervisor];
    const theirs = others.map(() => randomBytes(16).toString("base64url"));
    for (const [index, userId] of others.entries()) {
      await db.passkey.create({
        data: { id: theirs[index]!, userId, publicKey: Buffer.from([1, 2, 3]), counter: 7, name: "Work laptop" },
      });
    }
    await signedInSupervisor(world);
    const proofId = await enrolProof();
    const before = await trail(world, [proofId]);
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);

    for (const credentialId of theirs) {
      expect(await register(proofId, "mine now", credentialId)).toEqual(REGISTERED_ELSEWHERE);
    }
    expect(await trail(world, [proofId])).toEqual(before);
    // Operators see each refusal with who tried and which credential; no host error.
    const lines = logged.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
    expect(lines).toEqual(
      theirs.map((passkeyId) =>
        expect.objectContaining({
          level: "info",
          event: "passkey.register-refused",
          userId: world.users.supervisor,
          passkeyId,
          reason: "registered-elsewhere",
        }),
      ),
    );
    logged.mockRestore();

    // The refusals used nothing up: the same proof adds a passkey of the person's own.
    expect(await register(proofId, "Phone")).toEqual({ ok: true, data: undefined });
    const after = await trail(world, [proofId]);
    expect(after.passkeys.filter((row) => row.userId === world.users.supervisor)).toHaveLength(1);
    expect(after.passkeys.filter((row) => row.userId !== world.users.supervisor)).toEqual(before.passkeys);
  });

  it("the person's own: refused as already registered, nothing written, the stored key unchanged; a proof made for it stays unused", async () => {
    const world = await createWorld();
    await signedInSupervisor(world);
    // Both proofs made with the password before the first passkey exists (after it, a passkey must prove).
    const first = await enrolProof();
    const second = await enrolProof();
    const credentialId = randomBytes(16).toString("base64url");
    expect(await register(first, "Laptop", credentialId)).toEqual({ ok: true, data: undefined });
    const before = await trail(world, [second]);
    expect(before.passkeys).toMatchObject([{ id: credentialId, userId: world.users.supervisor, name: "Laptop" }]);

    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(await register(second, "Laptop again", credentialId)).toEqual({
      ok: false,
      code: "passkey.already-registered",
      message: "This passkey is already on your account. To add another, use a different device or security key.",
    });
    expect(await trail(world, [second])).toEqual(before);
    expect(logged.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>)).toEqual([
      expect.objectContaining({
        event: "passkey.register-refused",
        userId: world.users.supervisor,
        passkeyId: credentialId,
        reason: "already-registered",
      }),
    ]);
  });
});
