import { randomBytes } from "node:crypto";
import {
  generateAuthenticationOptions,
  verifyAuthenticationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { z } from "zod";
import { canonicalJson, sha256Hex } from "../../canonical";
import { db, transaction, type Db } from "../../db";
import { env } from "../../env";
import { newId } from "../../ids";
import { logError } from "../../observe/log";
import { IdSchema } from "../../security/input";
import { verifyPassword } from "../password-hash";
import {
  consumeStepUpItem,
  findCredentials,
  findPasskey,
  findPasswordProof,
  insertStepUpProof,
  markPasskeyUsed,
  markProofProved,
  returnStepUpItem,
  takeProofChallenge,
  type PasswordProofFacts,
} from "./sql";
import { attemptSucceeded, beginAuditedAttempt, inSessionKeys } from "../throttle";

// One step-up primitive (decision 014). A proof is made by one ceremony for one purpose, from one session:
// - a passkey assertion over a challenge that is a random nonce followed by the purpose's digest, so the
//   authenticator signs over what it approves; or, for a person with no passkey, the password typed again;
// - it counts only from the session that made it and only for STEP_UP_PROOF_MS after it was made;
// - each item of its purpose (one approval request at one amount, one passkey, one admin change) is consumed
//   once, by the statement that does the thing, inside that thing's transaction; a thing that then stops short
//   (an approval whose re-check fails) gives its item back in that transaction.

export type StepUpMethod = "passkey" | "password";

/** How long a made proof may be used, and how long a ceremony may take. */
export const STEP_UP_PROOF_MS = 2 * 60_000;

const Cents = z.number().int().min(0).max(1_000_000_000);

/** A passkey's credential id as WebAuthn's JSON carries it: base64url. */
export const PasskeyIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,1000}$/, "not a passkey id");

/** What a proof approves. The client names it; the action that consumes it checks it against what it does. */
/** The id of a step-up proof an action consumes, as every action takes it: one `newId` made. */
export const ProofIdSchema = IdSchema;

export const StepUpPurposeSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("approve"),
    items: z
      .array(z.strictObject({ id: IdSchema, cents: Cents }))
      .min(1)
      .max(100),
  }),
  z.strictObject({ kind: z.literal("passkey.enrol") }),
  z.strictObject({ kind: z.literal("passkey.remove"), passkeyId: PasskeyIdSchema }),
  z.strictObject({ kind: z.literal("investigation.release"), refundId: IdSchema }),
  z.strictObject({ kind: z.literal("overpaid.close"), refundId: IdSchema }),
  z.strictObject({ kind: z.literal("admin.policy"), values: z.record(z.string().max(60), z.string().max(30)) }),
  z.strictObject({ kind: z.literal("admin.refunds-granted"), userId: IdSchema }),
  z.strictObject({ kind: z.literal("admin.key-created"), userId: IdSchema }),
  z.strictObject({ kind: z.literal("admin.passkeys-removed"), userId: IdSchema }),
  z.strictObject({ kind: z.literal("admin.rules"), digest: z.string().regex(/^[0-9a-f]{64}$/) }),
  z.strictObject({ kind: z.literal("admin.webhook"), url: z.string().min(1).max(2000) }),
  z.strictObject({ kind: z.literal("admin.time-zone"), timeZone: z.string().min(1).max(64) }),
  z.strictObject({
    kind: z.literal("admin.chat"),
    provider: z.enum(["slack", "teams"]),
    target: z.string().min(1).max(2000),
  }),
  z.strictObject({ kind: z.literal("admin.self-registration") }),
  z.strictObject({
    kind: z.literal("admin.sso"),
    issuer: z.string().min(1).max(500),
    emailDomain: z.string().min(1).max(200),
  }),
  z.strictObject({ kind: z.literal("admin.sso-removed"), issuer: z.string().min(1).max(500) }),
  z.strictObject({
    kind: z.literal("admin.sso-invite"),
    email: z.string().min(1).max(200),
    subject: z.string().min(1).max(255),
  }),
  z.strictObject({ kind: z.literal("oauth.refunds-delegated"), digest: z.string().regex(/^[0-9a-f]{64}$/) }),
  z.strictObject({
    kind: z.literal("admin.change-approved"),
    changeId: IdSchema,
    digest: z.string().regex(/^[0-9a-f]{64}$/),
  }),
]);
export type StepUpPurpose = z.infer<typeof StepUpPurposeSchema>;
export type StepUpKind = StepUpPurpose["kind"];

/**
 * The items a purpose covers, each consumed once: a request at an amount, a passkey, a person, a change's digest, a
 * webhook URL's digest.
 */
export function purposeItems(purpose: StepUpPurpose): string[] {
  switch (purpose.kind) {
    case "approve":
      return [...new Set(purpose.items.map((item) => approvalItem(item.id, item.cents)))].sort();
    case "passkey.enrol":
      return ["enrol"];
    case "passkey.remove":
      return [purpose.passkeyId];
    case "investigation.release":
    case "overpaid.close":
      return [purpose.refundId];
    case "admin.policy":
      return [policyItem(purpose.values)];
    case "admin.refunds-granted":
    case "admin.key-created":
    case "admin.passkeys-removed":
      return [purpose.userId];
    case "admin.change-approved":
      return [`${purpose.changeId}:${purpose.digest}`];
    case "admin.rules":
    case "oauth.refunds-delegated":
      return [purpose.digest];
    case "admin.webhook":
      return [webhookItem(purpose.url)];
    case "admin.time-zone":
      return [purpose.timeZone];
    case "admin.chat":
      return [chatItem(purpose.provider, purpose.target)];
    case "admin.self-registration":
      return ["allow"];
    case "admin.sso":
      return [sha256Hex(`sso\n${purpose.issuer}\n${purpose.emailDomain}`)];
    case "admin.sso-removed":
      return [sha256Hex(`sso-removed\n${purpose.issuer}`)];
    case "admin.sso-invite":
      return [sha256Hex(`sso-invite\n${purpose.email}\n${purpose.subject}`)];
  }
}

/** The item an approval of one request at one amount consumes. */
export function approvalItem(approvalId: string, cents: number): string {
  return `${approvalId}:${cents}`;
}

/** The item a policy change consumes: the digest of the form exactly as submitted. */
export function policyItem(values: Record<string, string>): string {
  return sha256Hex(canonicalJson(values));
}

/** The item setting the webhook consumes: the digest of its URL, so the proof row never holds the URL itself. */
export function webhookItem(url: string): string {
  return sha256Hex(`webhook\n${url}`);
}

/** The item connecting a chat channel consumes: the digest of where notices go (Slack's channel id, Teams' URL). */
export function chatItem(provider: "slack" | "teams", target: string): string {
  return sha256Hex(`chat\n${provider}\n${target}`);
}

function purposeDigest(kind: StepUpKind, items: string[]): string {
  return sha256Hex(canonicalJson({ kind, items }));
}

interface Person {
  id: string;
  email: string;
}

/** Who presents a proof, from which session, and which proof. */
export interface StepUpHolder {
  userId: string;
  sessionId: string | null;
  proofId: string | null | undefined;
}

// The relying party is the address people sign in at (NEXTAUTH_URL). WebAuthn refuses an IP address as its id, so
// on the loopback address passkeys work at http://localhost with the same port.
export function relyingParty(): { id: string; origin: string } {
  const url = new URL(env().NEXTAUTH_URL ?? "http://localhost:3000");
  if (url.hostname === "127.0.0.1") url.hostname = "localhost";
  return { id: url.hostname, origin: url.origin };
}

type AuthenticatorTransportFuture = NonNullable<
  NonNullable<Parameters<typeof generateAuthenticationOptions>[0]["allowCredentials"]>[number]["transports"]
>[number];

export type StepUpStart =
  { method: "passkey"; proofId: string; options: PublicKeyCredentialRequestOptionsJSON } | { method: "password" };

/**
 * Opens a ceremony for a purpose. A person with a passkey gets a WebAuthn challenge made of a random nonce and the
 * purpose's digest (the authenticator signs both); a person without one is told to prove with their password.
 */
export async function beginStepUp(person: Person, sessionId: string, purpose: StepUpPurpose): Promise<StepUpStart> {
  const keys = await findCredentials(db, person.id);
  if (keys.length === 0) return { method: "password" };
  const digest = purposeDigest(purpose.kind, purposeItems(purpose));
  const challenge = new Uint8Array(Buffer.concat([randomBytes(16), Buffer.from(digest, "hex")]));
  const options = await generateAuthenticationOptions({
    rpID: relyingParty().id,
    challenge,
    allowCredentials: keys.map((key) => ({ id: key.id, transports: key.transports as AuthenticatorTransportFuture[] })),
    userVerification: "required",
  });
  const proofId = await recordProof(person, sessionId, purpose, { method: "passkey", challenge: options.challenge });
  return { method: "passkey", proofId, options };
}

/** Writes a proof row for a purpose: a password's is proved as it is written, a passkey's when its assertion comes. */
async function recordProof(
  person: Person,
  sessionId: string,
  purpose: StepUpPurpose,
  proof: { method: "passkey"; challenge: string } | { method: "password" },
): Promise<string> {
  const items = purposeItems(purpose);
  const id = newId("sup");
  const now = new Date();
  await insertStepUpProof(db, {
    id,
    userId: person.id,
    sessionId,
    kind: purpose.kind,
    items,
    purposeDigest: purposeDigest(purpose.kind, items),
    method: proof.method,
    challenge: proof.method === "passkey" ? proof.challenge : null,
    provedAt: proof.method === "password" ? now : null,
    expiresAt: new Date(now.getTime() + STEP_UP_PROOF_MS),
  });
  return id;
}

/** Completes a passkey ceremony: the assertion must answer this proof's challenge, once, from the same session. */
export async function proveWithPasskey(
  person: Person,
  sessionId: string,
  proofId: string,
  response: AuthenticationResponseJSON,
): Promise<boolean> {
  const open = await takeProofChallenge(db, { proofId, userId: person.id, sessionId });
  if (!open) return false;
  // The challenge carries the digest of what it approves; a row whose challenge does not is not a proof.
  if (!Buffer.from(open.challenge, "base64url").subarray(16).equals(Buffer.from(open.purposeDigest, "hex")))
    return false;
  const key = await findPasskey(db, person.id, response.id);
  if (!key) return false;
  const party = relyingParty();
  try {
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: open.challenge,
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
      await markProofProved(tx, proofId, now, new Date(now.getTime() + STEP_UP_PROOF_MS));
    });
    return true;
  } catch (error) {
    logError("passkey.step-up-refused", error, { userId: person.id });
    return false;
  }
}

export type PasswordProof =
  | { kind: "ok"; proofId: string }
  | { kind: "wrong" }
  | { kind: "use-passkey" }
  | { kind: "sso-required" }
  | { kind: "sso-sign-in-again" }
  | { kind: "throttled"; retryAfterSeconds: number };

/** How recent a sign-in through the tenant's provider must be for a person's first passkey in a tenant requiring it. */
export const FRESH_SSO_SIGN_IN_MS = 10 * 60_000;

/**
 * In a tenant that requires single sign-on, a non-admin's password proves nothing, since the tenant no longer accepts
 * it at sign-in, except their first passkey (`freshSsoSignIn`). Admins keep their password as they do at sign-in
 * (break-glass).
 */
const passwordRefusedBySso = (facts: PasswordProofFacts) => facts.ssoRequiredBy !== null && facts.role !== "ADMIN";

/** Whether this session was signed in through the tenant's provider within the last 10 minutes. */
const freshSsoSignIn = (facts: PasswordProofFacts) =>
  facts.signedInVia === "sso" &&
  facts.signedInAt !== null &&
  Date.now() - facts.signedInAt.getTime() <= FRESH_SSO_SIGN_IN_MS;

/** How a person proves a step-up in this session, for the pages that ask before they try. */
export type StepUpWay =
  | { with: "passkey" }
  | { with: "password" }
  /**
   * A tenant that requires single sign-on: a passkey only. The first one is added with the password now (`now`: the
   * provider signed this session in within 10 minutes), or after signing in through the provider again.
   */
  | { with: "passkey-needed"; firstPasskey: "now" | "sign-in-again"; provider: { tenantId: string; name: string } };

/** How this person proves a step-up in this session: what `proveWithPassword` and the passkey ceremony will take. */
export async function stepUpWayOf(userId: string, sessionId: string): Promise<StepUpWay> {
  const facts = await findPasswordProof(db, userId, sessionId);
  if (facts && facts.passkeys > 0) return { with: "passkey" };
  if (!facts || !passwordRefusedBySso(facts)) return { with: "password" };
  return {
    with: "passkey-needed",
    firstPasskey: freshSsoSignIn(facts) ? "now" : "sign-in-again",
    provider: { tenantId: facts.tenantId, name: facts.ssoRequiredBy! },
  };
}

/**
 * The password again, for a person without a passkey; someone with a passkey must use it, and in a tenant that
 * requires single sign-on only an admin may use it, or a person adding their first passkey (`passwordRefusedBySso`).
 * Each try counts toward the in-session throttle of this session and this person, not the sign-in form's: failed
 * sign-ins from outside cannot lock a signed-in person's step-up, and a stolen session still guesses no faster than
 * at sign-in.
 * The proof row carries the purpose's digest and items, as a passkey's does.
 */
export async function proveWithPassword(
  person: Person,
  sessionId: string,
  purpose: StepUpPurpose,
  password: string,
): Promise<PasswordProof> {
  const user = await findPasswordProof(db, person.id, sessionId);
  if (!user) return { kind: "wrong" };
  if (user.passkeys > 0) return { kind: "use-passkey" };
  if (passwordRefusedBySso(user)) {
    if (purpose.kind !== "passkey.enrol") return { kind: "sso-required" };
    if (!freshSsoSignIn(user)) return { kind: "sso-sign-in-again" };
  }
  const keys = inSessionKeys({ userId: person.id, sessionId });
  const attempt = await beginAuditedAttempt(keys, {
    action: "step-up.throttled",
    detail: { session_id: sessionId, purpose: purpose.kind },
    who: () => ({ tenantId: user.tenantId, actorId: person.id }),
  });
  if (!attempt.allowed) return { kind: "throttled", retryAfterSeconds: attempt.retryAfterSeconds };
  if (!(await verifyPassword(password, user.passwordHash)).matches) return { kind: "wrong" };
  await attemptSucceeded(keys);
  return { kind: "ok", proofId: await recordProof(person, sessionId, purpose, { method: "password" }) };
}

/**
 * Consumes one item of a proof inside the caller's transaction: the proof must be this person's, made in this
 * session, proved, unexpired, for this kind of purpose, cover this item, and not have been used for it. Returns how
 * it was proved, or null (and consumes nothing) when any of that fails.
 */
export async function consumeStepUp(
  tx: Db,
  holder: StepUpHolder,
  kind: StepUpKind,
  item: string,
): Promise<StepUpMethod | null> {
  if (!holder.proofId || !holder.sessionId) return null;
  const method = await consumeStepUpItem(tx, {
    proofId: holder.proofId,
    userId: holder.userId,
    sessionId: holder.sessionId,
    kind,
    item,
  });
  return method === "passkey" || method === "password" ? method : null;
}

/**
 * Gives back an item `consumeStepUp` consumed earlier in the same transaction, for a thing that then stopped short of
 * happening, so the proof stays good for the retry: an item is used only by what takes effect.
 */
export async function returnStepUp(tx: Db, holder: StepUpHolder, item: string): Promise<void> {
  if (holder.proofId) await returnStepUpItem(tx, holder.proofId, item);
}

/** Consumes a single-item purpose (everything but a batch of approvals). */
export async function consumeStepUpFor(
  tx: Db,
  holder: StepUpHolder,
  purpose: Exclude<StepUpPurpose, { kind: "approve" }>,
): Promise<StepUpMethod | null> {
  const [item] = purposeItems(purpose);
  return consumeStepUp(tx, holder, purpose.kind, item!);
}
