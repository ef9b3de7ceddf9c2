import "server-only";
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { verifyPassword } from "../auth/passwords";
import { attemptSucceeded, beginAttempt } from "../auth/throttle";
import { db, transaction, type Db } from "../db";
import { logError } from "../log";
import { env } from "../env";
import {
  findCredentials,
  findPasskey,
  findPasswordProof,
  findStepUp,
  insertPasskey,
  listPasskeys,
  markPasskeyUsed,
  markSteppedUp,
  storeChallenge,
  takeChallenge,
} from "./sql";

export type StepUpMethod = "passkey" | "password";

/** How long a proof counts as fresh for approving money movement. */
export const STEP_UP_FRESH_MS = 5 * 60_000;
const CHALLENGE_MS = 2 * 60_000;

interface Person {
  id: string;
  email: string;
  name: string;
}

// The relying party is the address people sign in at (NEXTAUTH_URL). WebAuthn refuses an IP address as its id, so
// on the loopback address passkeys work at http://localhost with the same port.
function relyingParty(): { id: string; origin: string } {
  const url = new URL(env().NEXTAUTH_URL ?? "http://localhost:3000");
  if (url.hostname === "127.0.0.1") url.hostname = "localhost";
  return { id: url.hostname, origin: url.origin };
}

/** The approver's proof if it is fresh enough to move money now, read in the deciding transaction. */
export async function freshStepUp(client: Db, userId: string): Promise<StepUpMethod | null> {
  const row = await findStepUp(client, userId);
  if (!row?.stepUpAt || Date.now() - row.stepUpAt.getTime() > STEP_UP_FRESH_MS) return null;
  return row.stepUpMethod === "passkey" || row.stepUpMethod === "password" ? row.stepUpMethod : null;
}

export async function passkeysOf(userId: string) {
  return listPasskeys(db, userId);
}

/** Takes the open challenge (single use: a replayed response finds none). */
async function takeFreshChallenge(userId: string): Promise<string | null> {
  const row = await takeChallenge(db, userId);
  if (!row?.challenge || !row.at || Date.now() - row.at.getTime() > CHALLENGE_MS) return null;
  return row.challenge;
}

export async function passkeyRegistrationOptions(person: Person): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await findCredentials(db, person.id);
  const options = await generateRegistrationOptions({
    rpName: "toolgate",
    rpID: relyingParty().id,
    userName: person.email,
    userDisplayName: person.name,
    userID: new TextEncoder().encode(person.id),
    attestationType: "none",
    excludeCredentials: existing.map((key) => ({ id: key.id, transports: key.transports })),
    authenticatorSelection: { residentKey: "preferred", userVerification: "required" },
  });
  await storeChallenge(db, person.id, options.challenge);
  return options;
}

export async function registerPasskey(
  person: Person,
  response: RegistrationResponseJSON,
  name: string,
): Promise<boolean> {
  const challenge = await takeFreshChallenge(person.id);
  if (!challenge) return false;
  const party = relyingParty();
  try {
    const verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
    });
    if (!verified.verified) return false;
    const { credential } = verified.registrationInfo;
    await insertPasskey(db, {
      id: credential.id,
      userId: person.id,
      publicKey: credential.publicKey,
      counter: credential.counter,
      transports: credential.transports ?? [],
      name,
    });
    return true;
  } catch (error) {
    logError("passkey.register-refused", error, { userId: person.id });
    return false;
  }
}

export async function passkeyStepUpOptions(person: Person): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  const keys = await findCredentials(db, person.id);
  if (keys.length === 0) return null;
  const options = await generateAuthenticationOptions({
    rpID: relyingParty().id,
    allowCredentials: keys.map((key) => ({ id: key.id, transports: key.transports as AuthenticatorTransportFuture[] })),
    userVerification: "required",
  });
  await storeChallenge(db, person.id, options.challenge);
  return options;
}

type AuthenticatorTransportFuture = NonNullable<
  NonNullable<Parameters<typeof generateAuthenticationOptions>[0]["allowCredentials"]>[number]["transports"]
>[number];

/** A passkey assertion over a fresh challenge: the strongest proof, and the only one for a person who has a passkey. */
export async function proveWithPasskey(person: Person, response: AuthenticationResponseJSON): Promise<boolean> {
  const challenge = await takeFreshChallenge(person.id);
  if (!challenge) return false;
  const key = await findPasskey(db, person.id, response.id);
  if (!key) return false;
  const party = relyingParty();
  try {
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      credential: {
        id: key.id,
        publicKey: new Uint8Array(key.publicKey),
        counter: key.counter,
        transports: key.transports,
      },
      requireUserVerification: true,
    });
    if (!verified.verified) return false;
    const now = new Date();
    await transaction(async (tx) => {
      await markPasskeyUsed(tx, key.id, verified.authenticationInfo.newCounter, now);
      await markSteppedUp(tx, person.id, "passkey", now);
    });
    return true;
  } catch (error) {
    logError("passkey.step-up-refused", error, { userId: person.id });
    return false;
  }
}

export type PasswordProof =
  { kind: "ok" } | { kind: "wrong" } | { kind: "use-passkey" } | { kind: "throttled"; retryAfterSeconds: number };

/**
 * The password again, for a person without a passkey; someone with a passkey must use it. Each try counts toward
 * the account's sign-in throttle, so a stolen session cannot guess the password here faster than at sign-in.
 */
export async function proveWithPassword(person: Person, password: string): Promise<PasswordProof> {
  const user = await findPasswordProof(db, person.id);
  if (!user) return { kind: "wrong" };
  if (user._count.passkeys > 0) return { kind: "use-passkey" };
  const keys = { email: person.email, address: `step-up:${person.id}` };
  const attempt = await beginAttempt(keys);
  if (!attempt.allowed) return { kind: "throttled", retryAfterSeconds: attempt.retryAfterSeconds };
  if (!(await verifyPassword(password, user.passwordHash)).matches) return { kind: "wrong" };
  await attemptSucceeded(keys);
  await markSteppedUp(db, person.id, "password", new Date());
  return { kind: "ok" };
}
