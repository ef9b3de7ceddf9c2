import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import bcrypt from "bcryptjs";
import {
  policyItem,
  proveWithPassword,
  relyingParty,
  type StepUpHolder,
  type StepUpPurpose,
} from "@/lib/auth/step-up/step-up";
import { db } from "@/lib/db";
import { newId } from "@/lib/ids";

export const STEP_UP_PASSWORD = "step-up-password";

/** A live session row for a person, as a sign-in makes it. */
export async function sessionOf(userId: string): Promise<string> {
  const { tenantId } = await db.user.findUniqueOrThrow({ where: { id: userId }, select: { tenantId: true } });
  const id = newId("ses");
  await db.session.create({ data: { id, userId, tenantId }, select: { id: true } });
  return id;
}

/**
 * A real password step-up for one purpose, made through the same function the ceremony's action calls, in a new
 * session of the person (or the one given); returns what an action presents to consume it.
 */
export async function provedFor(
  userId: string,
  purpose: StepUpPurpose,
  sessionId?: string,
): Promise<StepUpHolder & { proofId: string; sessionId: string }> {
  const person = await db.user.update({
    where: { id: userId },
    data: { passwordHash: bcrypt.hashSync(STEP_UP_PASSWORD, 4) },
    select: { id: true, email: true },
  });
  const session = sessionId ?? (await sessionOf(userId));
  const proved = await proveWithPassword(person, session, purpose, STEP_UP_PASSWORD);
  if (proved.kind !== "ok") throw new Error(`step-up refused: ${proved.kind}`);
  return { userId, sessionId: session, proofId: proved.proofId };
}

/** A proof for saving the policy form with exactly these typed values. */
export async function policyProof(userId: string, values: Record<string, string>) {
  return { holder: await provedFor(userId, { kind: "admin.policy", values }), item: policyItem(values) };
}

/** No proof at all, from a live session: what a stolen cookie presents. */
export async function noProof(userId: string): Promise<StepUpHolder> {
  return { userId, sessionId: await sessionOf(userId), proofId: null };
}

type Cbor = Parameters<typeof isoCBOR.encode>[0];

/**
 * What a software authenticator answers registration options with: "none" attestation, the person present and
 * verified, a new P-256 key, under the credential id given (any: an authenticator of one's own picks its ids).
 */
export function registrationFor(
  options: PublicKeyCredentialCreationOptionsJSON,
  credentialId = randomBytes(16).toString("base64url"),
): RegistrationResponseJSON {
  const party = relyingParty();
  const { x, y } = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" });
  // COSE: kty EC2, alg ES256, crv P-256, x, y.
  const publicKey = isoCBOR.encode(
    new Map<number, Cbor>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(x!, "base64url"))],
      [-3, new Uint8Array(Buffer.from(y!, "base64url"))],
    ]),
  );
  const id = Buffer.from(credentialId, "base64url");
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(id.length);
  // rpIdHash, flags (user present, user verified, attested credential data), counter 0, an all-zero AAGUID.
  const authData = Buffer.concat([
    createHash("sha256").update(party.id).digest(),
    Buffer.from([0x45]),
    Buffer.alloc(4),
    Buffer.alloc(16),
    idLength,
    id,
    publicKey,
  ]);
  const clientData = {
    type: "webauthn.create",
    challenge: options.challenge,
    origin: party.origin,
    crossOrigin: false,
  };
  const attestationObject = isoCBOR.encode(
    new Map<string, Cbor>([
      ["fmt", "none"],
      ["attStmt", new Map()],
      ["authData", new Uint8Array(authData)],
    ]),
  );
  return {
    id: credentialId,
    rawId: credentialId,
    type: "public-key",
    response: {
      clientDataJSON: Buffer.from(JSON.stringify(clientData)).toString("base64url"),
      attestationObject: Buffer.from(attestationObject).toString("base64url"),
      transports: ["internal"],
    },
    clientExtensionResults: {},
  };
}
