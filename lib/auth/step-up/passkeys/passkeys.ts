import {
  generateRegistrationOptions,
  verifyRegistrationResponse,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { appendAuditLog } from "../../../audit/sql";
import { db, transaction, type Db } from "../../../db";
import { logError, logInfo } from "../../../observe/log";
import { queueMessages } from "../../../db/outbox";
import {
  deletePasskey,
  deleteTenantPersonPasskeys,
  findCredentials,
  findTenantPerson,
  hasStepUpItem,
  insertPasskey,
  isOwnPasskey,
  listPasskeys,
  storeChallenge,
  takeChallenge,
} from "../sql";
import { consumeStepUpFor, relyingParty, returnStepUp, type StepUpHolder } from "../step-up";

// A person's passkeys. Adding or removing one needs a fresh step-up with a factor they already have (the password,
// or an existing passkey), made in the same session for exactly that change; the change is audited and the owner
// is told by email, so a stolen session cannot quietly give itself a second factor or take the owner's away.

const CHALLENGE_MS = 2 * 60_000;

interface Person {
  id: string;
  email: string;
  name: string;
  tenantId: string;
}

export async function passkeysOf(userId: string) {
  return listPasskeys(db, userId);
}

const ENROL = { kind: "passkey.enrol" } as const;

/** Registration options, only for a session holding an unused enrolment proof (checked here, consumed on register). */
export async function passkeyRegistrationOptions(
  person: Person,
  holder: StepUpHolder,
): Promise<PublicKeyCredentialCreationOptionsJSON | null> {
  const { proofId, sessionId } = holder;
  if (!proofId || !sessionId) return null;
  if (!(await hasStepUpItem(db, { userId: person.id, sessionId, proofId, kind: ENROL.kind, item: "enrol" })))
    return null;
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

export type PasskeyChange =
  "ok" | "step-up-required" | "refused" | "not-found" | "already-registered" | "registered-elsewhere";

/**
 * Stores a new passkey: the enrolment proof is consumed in the same transaction, which also audits and emails. A
 * credential id already registered, to this person or anyone else, is refused with the proof given back and nothing
 * written: the existing row is never touched, and the answer says only whether it is the person's own.
 */
export async function registerPasskey(
  person: Person,
  holder: StepUpHolder,
  response: RegistrationResponseJSON,
  name: string,
): Promise<PasskeyChange> {
  const open = await takeChallenge(db, person.id);
  if (!open?.challenge || !open.at || Date.now() - open.at.getTime() > CHALLENGE_MS) return "refused";
  const party = relyingParty();
  let verified;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: open.challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
    });
  } catch (error) {
    logError("passkey.register-refused", error, { userId: person.id });
    return "refused";
  }
  if (!verified.verified) return "refused";
  const { credential } = verified.registrationInfo;
  return transaction(async (tx) => {
    const method = await consumeStepUpFor(tx, holder, ENROL);
    if (!method) return "step-up-required";
    const stored = await insertPasskey(tx, {
      id: credential.id,
      userId: person.id,
      publicKey: credential.publicKey,
      counter: credential.counter,
      transports: credential.transports ?? [],
      name,
    });
    if (!stored) {
      await returnStepUp(tx, holder, "enrol");
      const reason = (await isOwnPasskey(tx, person.id, credential.id)) ? "already-registered" : "registered-elsewhere";
      logInfo("passkey.register-refused", { userId: person.id, passkeyId: credential.id, reason });
      return reason;
    }
    await recordChange(tx, person, person.id, "passkey.added", { passkeyId: credential.id, name, stepUp: method });
    return "ok";
  });
}

/** Removes one of the person's own passkeys, with a proof for exactly that passkey. */
export async function removeOwnPasskey(
  person: Person,
  holder: StepUpHolder,
  passkeyId: string,
): Promise<PasskeyChange> {
  return transaction(async (tx) => {
    const method = await consumeStepUpFor(tx, holder, { kind: "passkey.remove", passkeyId });
    if (!method) return "step-up-required";
    const name = await deletePasskey(tx, person.id, passkeyId);
    if (name === undefined) return "not-found";
    await recordChange(tx, person, person.id, "passkey.removed", { passkeyId, name, stepUp: method });
    return "ok";
  });
}

/** An admin removes every passkey of a person of their tenant (a lost device); needs the admin's step-up. */
export async function removePersonPasskeys(
  admin: { id: string; tenantId: string },
  holder: StepUpHolder,
  userId: string,
): Promise<PasskeyChange> {
  return transaction(async (tx) => {
    const person = await findTenantPerson(tx, admin.tenantId, userId);
    if (!person) return "not-found";
    const method = await consumeStepUpFor(tx, holder, { kind: "admin.passkeys-removed", userId });
    if (!method) return "step-up-required";
    const names = await deleteTenantPersonPasskeys(tx, admin.tenantId, userId);
    await recordChange(tx, { ...person, tenantId: admin.tenantId }, admin.id, "passkey.removed-by-admin", {
      userId,
      email: person.email,
      names,
      stepUp: method,
    });
    return "ok";
  });
}

const MAIL: Record<string, (detail: Record<string, unknown>) => { subject: string; body: string }> = {
  "passkey.added": (detail) => ({
    subject: "A passkey was added to your toolgate account",
    body: `A passkey named "${String(detail.name)}" was added to your account. If this was not you, tell an admin now: they can remove your passkeys and end your sessions.`,
  }),
  "passkey.removed": (detail) => ({
    subject: "A passkey was removed from your toolgate account",
    body: `The passkey named "${String(detail.name)}" was removed from your account. If this was not you, tell an admin now.`,
  }),
  "passkey.removed-by-admin": (detail) => ({
    subject: "An admin removed your toolgate passkeys",
    body: `An admin removed ${(detail.names as string[]).length} passkey(s) from your account. Until you add a new one, large approvals ask for your password.`,
  }),
};

async function recordChange(
  tx: Db,
  owner: { id: string; email: string; tenantId: string },
  actorId: string,
  action: "passkey.added" | "passkey.removed" | "passkey.removed-by-admin",
  detail: Record<string, unknown>,
): Promise<void> {
  await appendAuditLog(tx, { tenantId: owner.tenantId, actorId, action, detail: { ...detail, ownerId: owner.id } });
  await queueMessages(tx, { tenantId: owner.tenantId, orderId: null, toolCallId: null }, [
    { kind: action, recipient: owner.email, ...MAIL[action]!(detail) },
  ]);
}
