import type { Client, Db } from "../../db";
import { Prisma, type Role } from "../../generated/prisma/client";
import type { SignedInVia } from "../sql";

/** Opens a WebAuthn registration challenge for a person, replacing any open one. */
export async function storeChallenge(db: Client, userId: string, challenge: string): Promise<void> {
  await db.user.update({
    where: { id: userId },
    data: { webauthnChallenge: challenge, webauthnChallengeAt: new Date() },
    select: { id: true },
  });
}

/** Clears a person's open registration challenge and returns it as it was (so it is used once). */
export async function takeChallenge(db: Db, userId: string) {
  const [row] = await db.$queryRaw<{ challenge: string | null; at: Date | null }[]>`
    UPDATE "User" u SET "webauthnChallenge" = NULL, "webauthnChallengeAt" = NULL
    FROM (SELECT "webauthnChallenge", "webauthnChallengeAt" FROM "User" WHERE "id" = ${userId} FOR UPDATE) AS before
    WHERE u."id" = ${userId}
    RETURNING before."webauthnChallenge" AS "challenge", before."webauthnChallengeAt" AS "at"`;
  return row;
}

/** What `findPasswordProof` reads; null from it when there is no such person. */
export interface PasswordProofFacts {
  passwordHash: string;
  passkeys: number;
  role: Role;
  tenantId: string;
  /** The provider's name when the person's tenant requires single sign-on, else null. */
  ssoRequiredBy: string | null;
  /** Null when the session is not this person's. */
  signedInVia: SignedInVia | null;
  signedInAt: Date | null;
}

/**
 * What a password step-up of this person in this session depends on: the hash, whether they have a passkey, and, in a
 * tenant that requires single sign-on, their role and how and when this session was signed in.
 */
export async function findPasswordProof(db: Db, userId: string, sessionId: string): Promise<PasswordProofFacts | null> {
  const [row] = await db.$queryRaw<PasswordProofFacts[]>`
    SELECT u."passwordHash", u."role", u."tenantId",
           (SELECT count(*)::int FROM "Passkey" p WHERE p."userId" = u."id") AS "passkeys",
           (SELECT t."displayName" FROM "TenantSso" t WHERE t."tenantId" = u."tenantId" AND t."required") AS "ssoRequiredBy",
           s."signedInVia", s."createdAt" AS "signedInAt"
    FROM "User" u LEFT JOIN "Session" s ON s."id" = ${sessionId} AND s."userId" = u."id"
    WHERE u."id" = ${userId}`;
  return row ?? null;
}

/** A person's passkeys, oldest first, as their settings list them. */
export async function listPasskeys(db: Client, userId: string) {
  return db.passkey.findMany({
    where: { userId },
    orderBy: { createdAt: "asc" },
    select: { id: true, name: true, createdAt: true, lastUsedAt: true },
  });
}

/** A person's passkeys as WebAuthn names them: ids and transports. */
export async function findCredentials(db: Client, userId: string) {
  return db.passkey.findMany({ where: { userId }, select: { id: true, transports: true } });
}

/** One of a person's passkeys with what verifies an assertion by it; null when they have no such key. */
export async function findPasskey(db: Client, userId: string, passkeyId: string) {
  return db.passkey.findFirst({
    where: { id: passkeyId, userId },
    select: { id: true, publicKey: true, counter: true, transports: true },
  });
}

/** Stores a passkey unless its credential id is already registered, to anyone; whether it was stored. */
export async function insertPasskey(
  db: Db,
  passkey: { id: string; userId: string; publicKey: Uint8Array; counter: number; transports: string[]; name: string },
): Promise<boolean> {
  const stored = await db.$executeRaw`
    INSERT INTO "Passkey" ("id", "userId", "publicKey", "counter", "transports", "name")
    VALUES (${passkey.id}, ${passkey.userId}, ${Buffer.from(passkey.publicKey)}, ${passkey.counter},
            ${passkey.transports}::text[], ${passkey.name})
    ON CONFLICT ("id") DO NOTHING`;
  return stored === 1;
}

/** Whether this credential id is one of this person's passkeys (never whose it is otherwise). */
export async function isOwnPasskey(db: Db, userId: string, passkeyId: string): Promise<boolean> {
  const [row] = await db.$queryRaw<{ found: boolean }[]>`
    SELECT true AS "found" FROM "Passkey" WHERE "id" = ${passkeyId} AND "userId" = ${userId}`;
  return row?.found === true;
}

/** Records a passkey's use: its new signature counter and when. */
export async function markPasskeyUsed(db: Db, passkeyId: string, counter: number, at: Date): Promise<void> {
  await db.$executeRaw`
    UPDATE "Passkey" SET "counter" = ${counter}, "lastUsedAt" = ${at.toISOString()}::timestamptz WHERE "id" = ${passkeyId}`;
}

/** Deletes one of a person's passkeys; returns its name, or undefined when they have no such key. */
export async function deletePasskey(db: Db, userId: string, passkeyId: string): Promise<string | undefined> {
  const [row] = await db.$queryRaw<{ name: string }[]>`
    DELETE FROM "Passkey" WHERE "id" = ${passkeyId} AND "userId" = ${userId} RETURNING "name"`;
  return row?.name;
}

/** Deletes every passkey of a person of this tenant; returns their names. */
export async function deleteTenantPersonPasskeys(db: Db, tenantId: string, userId: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ name: string }[]>`
    DELETE FROM "Passkey" p USING "User" u
    WHERE p."userId" = u."id" AND u."id" = ${userId} AND u."tenantId" = ${tenantId}
    RETURNING p."name"`;
  return rows.map((row) => row.name);
}

/** A person of this tenant, as a passkey removal names and tells them; null when there is none. */
export async function findTenantPerson(db: Db, tenantId: string, userId: string) {
  const [row = null] = await db.$queryRaw<{ id: string; email: string; name: string }[]>`
    SELECT "id", "email", "name" FROM "User" WHERE "id" = ${userId} AND "tenantId" = ${tenantId}`;
  return row;
}

/** Stores a step-up proof: open (a passkey challenge waiting for its assertion) or already proved (the password). */
export async function insertStepUpProof(
  db: Db,
  proof: {
    id: string;
    userId: string;
    sessionId: string;
    kind: string;
    items: string[];
    purposeDigest: string;
    method: "passkey" | "password";
    challenge: string | null;
    provedAt: Date | null;
    expiresAt: Date;
  },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "StepUpProof" ("id", "userId", "sessionId", "kind", "items", "purposeDigest", "method", "challenge", "provedAt", "expiresAt")
    VALUES (${proof.id}, ${proof.userId}, ${proof.sessionId}, ${proof.kind}, ${proof.items}::text[], ${proof.purposeDigest},
            ${proof.method}, ${proof.challenge}::text, ${proof.provedAt?.toISOString() ?? null}::timestamptz,
            ${proof.expiresAt.toISOString()}::timestamptz)`;
}

/**
 * Takes an open proof's challenge (single use: a replayed assertion finds none), only for the person and session
 * that opened it and before it expires; undefined otherwise.
 */
export async function takeProofChallenge(db: Db, proof: { proofId: string; userId: string; sessionId: string }) {
  const [row] = await db.$queryRaw<{ challenge: string; purposeDigest: string }[]>`
    UPDATE "StepUpProof" p SET "challenge" = NULL
    FROM (SELECT "challenge" FROM "StepUpProof" WHERE "id" = ${proof.proofId} FOR UPDATE) AS before
    WHERE p."id" = ${proof.proofId} AND p."userId" = ${proof.userId} AND p."sessionId" = ${proof.sessionId}
      AND p."challenge" IS NOT NULL AND p."provedAt" IS NULL AND p."expiresAt" > now()
    RETURNING before."challenge" AS "challenge", p."purposeDigest" AS "purposeDigest"`;
  return row;
}

/** Marks a proof as made by its ceremony, counting until `expiresAt`. */
export async function markProofProved(db: Db, proofId: string, at: Date, expiresAt: Date): Promise<void> {
  await db.$executeRaw`
    UPDATE "StepUpProof" SET "provedAt" = ${at.toISOString()}::timestamptz, "expiresAt" = ${expiresAt.toISOString()}::timestamptz
    WHERE "id" = ${proofId}`;
}

interface ProofUse {
  proofId: string;
  userId: string;
  sessionId: string;
  kind: string;
  item: string;
}

/** The proof, usable for this item: this person's, this session's, proved, unexpired, of this kind, covering the item, not yet used for it. */
function usableProof(use: ProofUse): Prisma.Sql {
  return Prisma.sql`"id" = ${use.proofId} AND "userId" = ${use.userId}
      AND "sessionId" = ${use.sessionId}
      AND "kind" = ${use.kind}
      AND "provedAt" IS NOT NULL
      AND "expiresAt" > now()
      AND ${use.item} = ANY("items")
      AND NOT (${use.item} = ANY(coalesce("usedFor", ARRAY[]::text[])))`;
}

/** Consumes one item of a usable proof in one conditional statement; returns how it was proved, or undefined (nothing consumed). */
export async function consumeStepUpItem(db: Db, use: ProofUse): Promise<string | undefined> {
  const [row] = await db.$queryRaw<{ method: string }[]>`
    UPDATE "StepUpProof" SET "usedFor" = array_append("usedFor", ${use.item})
    WHERE ${usableProof(use)}
    RETURNING "method"`;
  return row?.method;
}

/**
 * Takes one item back out of a proof's `usedFor`, in the transaction whose `consumeStepUpItem` put it there: that
 * statement's row lock is still held, so no other use saw the item taken.
 */
export async function returnStepUpItem(db: Db, proofId: string, item: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "StepUpProof" SET "usedFor" = array_remove("usedFor", ${item}) WHERE "id" = ${proofId}`;
}

/** Whether a usable proof covers this item (checked, not consumed). */
export async function hasStepUpItem(db: Db, use: ProofUse): Promise<boolean> {
  const [row] = await db.$queryRaw<{ found: boolean }[]>`
    SELECT true AS "found" FROM "StepUpProof" WHERE ${usableProof(use)}`;
  return row?.found === true;
}
