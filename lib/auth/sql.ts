import type { Client, Db, Tx } from "../db";
import { Prisma, type Role } from "../generated/prisma/client";

// The auth module's statements: API keys, people signing in, their sessions, the sign-in throttle, passkeys and
// step-up proofs.

/** Stores a new API key by its hash and prefix (the key itself is never stored). */
export async function insertApiKey(
  db: Db,
  key: { id: string; tenantId: string; userId: string; prefix: string; hash: string },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ApiKey" ("id", "tenantId", "userId", "prefix", "hash")
    VALUES (${key.id}, ${key.tenantId}, ${key.userId}, ${key.prefix}, ${key.hash})`;
}

/** How a request names its key row: a pasted key by its hash, or an OAuth connection's row by its id. */
export type KeyCredential = { hash: string } | { keyId: string };

/**
 * Which rows authenticate this credential: the key, not revoked and not waiting for a second admin, of an active
 * agent of the key's own tenant (aliases k and ku). Every lookup of an agent by its key uses this, alone or joined to more.
 */
export function agentKeyRows(credential: KeyCredential): { from: Prisma.Sql; where: Prisma.Sql } {
  const match =
    "hash" in credential ? Prisma.sql`k."hash" = ${credential.hash}` : Prisma.sql`k."id" = ${credential.keyId}`;
  return {
    from: Prisma.sql`"ApiKey" k JOIN "User" ku ON ku."id" = k."userId" AND ku."tenantId" = k."tenantId"`,
    where: Prisma.sql`${match} AND k."revokedAt" IS NULL AND k."pendingChangeId" IS NULL AND ku."active" AND ku."role" = 'AGENT'`,
  };
}

/** The key id, agent and tenant that a key with this hash authenticates, or null. */
export async function findAgentByKeyHash(
  db: Db,
  hash: string,
): Promise<{ apiKeyId: string; userId: string; tenantId: string } | null> {
  const key = agentKeyRows({ hash });
  const [row] = await db.$queryRaw<{ apiKeyId: string; userId: string; tenantId: string }[]>`
    SELECT k."id" AS "apiKeyId", ku."id" AS "userId", k."tenantId" FROM ${key.from} WHERE ${key.where}`;
  return row ?? null;
}

/** Marks an OAuth connection used now, at most once a minute so busy connections do not write on every call. */
export async function touchConnection(db: Db, grantId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "OAuthGrant" SET "lastUsedAt" = CURRENT_TIMESTAMP
    WHERE "id" = ${grantId} AND "revokedAt" IS NULL
      AND ("lastUsedAt" IS NULL OR "lastUsedAt" < CURRENT_TIMESTAMP - interval '1 minute')`;
}

/** The person with this email, with what signing in needs (password hash, active), or null. */
export async function findUserByEmail(db: Client, email: string) {
  return db.user.findUnique({
    where: { email },
    select: { id: true, email: true, name: true, role: true, tenantId: true, passwordHash: true, active: true },
  });
}

/** The person's stored password hash, or null when there is no such person. */
export async function findPasswordHash(db: Client, userId: string): Promise<string | null> {
  const user = await db.user.findUnique({ where: { id: userId }, select: { passwordHash: true } });
  return user?.passwordHash ?? null;
}

/**
 * Stores a new hash of the person's password. `changed` marks a new password (which ends the person's sessions,
 * by trigger); a rehash of the same password in a stronger form leaves it unset.
 */
export async function setPasswordHash(
  db: Client,
  userId: string,
  passwordHash: string,
  { changed }: { changed: boolean },
): Promise<void> {
  await db.user.update({
    where: { id: userId },
    data: changed ? { passwordHash, passwordChangedAt: new Date() } : { passwordHash },
    select: { id: true },
  });
}

export async function insertAuditLogs(
  db: Client,
  rows: { tenantId: string; actorId: string; action: string; detail: Prisma.InputJsonValue }[],
): Promise<void> {
  await db.auditLog.createMany({ data: rows });
}

export async function insertSession(
  db: Client,
  session: { id: string; userId: string; tenantId: string; address: string; userAgent: string },
): Promise<void> {
  await db.session.create({ data: session, select: { id: true } });
}

/**
 * The person of a live session (not ended, not idle past `idleSeconds`, not older than `maxSeconds`, person
 * active), or null; marks the session seen when it was last seen more than `touchEverySeconds` ago.
 */
export async function findSessionUser(
  db: Db,
  sessionId: string,
  limits: { idleSeconds: number; maxSeconds: number; touchEverySeconds: number },
): Promise<{ id: string; email: string; name: string; role: Role; tenantId: string; tenantName: string } | null> {
  const [row] = await db.$queryRaw<
    { id: string; email: string; name: string; role: Role; tenantId: string; tenantName: string }[]
  >`
    WITH live AS (
      SELECT s."id", s."lastSeenAt", u."id" AS "userId", u."email", u."name", u."role"::text AS "role", u."tenantId"
      FROM "Session" s JOIN "User" u ON u."id" = s."userId" AND u."tenantId" = s."tenantId"
      WHERE s."id" = ${sessionId} AND s."endedAt" IS NULL AND u."active"
        AND s."lastSeenAt" > CURRENT_TIMESTAMP - make_interval(secs => ${limits.idleSeconds}::int)
        AND s."createdAt" > CURRENT_TIMESTAMP - make_interval(secs => ${limits.maxSeconds}::int)
    ), touched AS (
      UPDATE "Session" SET "lastSeenAt" = CURRENT_TIMESTAMP
      WHERE "id" = (SELECT "id" FROM live WHERE "lastSeenAt" < CURRENT_TIMESTAMP - make_interval(secs => ${limits.touchEverySeconds}::int))
    )
    SELECT live."userId" AS "id", live."email", live."name", live."role", live."tenantId", t."name" AS "tenantName"
    FROM live JOIN "Tenant" t ON t."id" = live."tenantId"`;
  return row ?? null;
}

/** Ends the session if it is still live, recording why. */
export async function markSessionEnded(db: Client, sessionId: string, reason: string): Promise<void> {
  await db.session.updateMany({
    where: { id: sessionId, endedAt: null },
    data: { endedAt: new Date(), endedReason: reason },
  });
}

/** The tenant's live sessions (at most 500), by person and then most recently seen first. */
export async function findLiveSessions(db: Client, tenantId: string) {
  return db.session.findMany({
    where: { tenantId, endedAt: null },
    orderBy: [{ userId: "asc" }, { lastSeenAt: "desc" }],
    take: 500,
    select: { id: true, userId: true, createdAt: true, lastSeenAt: true, address: true, userAgent: true },
  });
}

/**
 * Locks the throttle row of a key, creating it at zero failures when missing. Returns its failures, the seconds
 * it stays locked (0 when not locked) and whether it was last counted more than `forgetAfterSeconds` ago.
 */
export async function lockThrottle(
  tx: Tx,
  key: string,
  forgetAfterSeconds: number,
): Promise<{ failures: number; retryAfter: number; stale: boolean }> {
  await tx.$executeRaw`INSERT INTO "SignInThrottle" ("key") VALUES (${key}) ON CONFLICT ("key") DO NOTHING`;
  const [row] = await tx.$queryRaw<{ failures: number; retryAfter: number; stale: boolean }[]>`
    SELECT "failures",
           COALESCE(CEIL(EXTRACT(EPOCH FROM "lockedUntil" - CURRENT_TIMESTAMP)), 0)::int AS "retryAfter",
           "updatedAt" < CURRENT_TIMESTAMP - make_interval(secs => ${forgetAfterSeconds}) AS "stale"
    FROM "SignInThrottle" WHERE "key" = ${key} FOR UPDATE`;
  return row;
}

/** Sets a key's failures, counted now, and locks it for `seconds` from now (unlocks it when 0). */
export async function setThrottleFailures(tx: Tx, key: string, failures: number, seconds: number): Promise<void> {
  await tx.$executeRaw`
    UPDATE "SignInThrottle" SET "failures" = ${failures}, "updatedAt" = CURRENT_TIMESTAMP,
      "lockedUntil" = CASE WHEN ${seconds}::int > 0 THEN CURRENT_TIMESTAMP + make_interval(secs => ${seconds}::int) END
    WHERE "key" = ${key}`;
}

/** Forgets a key's failures and lock. */
export async function deleteThrottle(db: Db, key: string): Promise<void> {
  await db.$executeRaw`DELETE FROM "SignInThrottle" WHERE "key" = ${key}`;
}

/** Takes one failure back from a key that has any, and unlocks it. */
export async function takeBackFailure(db: Db, key: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "SignInThrottle" SET "failures" = "failures" - 1, "lockedUntil" = NULL
    WHERE "key" = ${key} AND "failures" > 0`;
}

// Passkeys and step-up proofs (decision 014)

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

/** A person's password hash and how many passkeys they have; null when there is no such person. */
export async function findPasswordProof(db: Client, userId: string) {
  return db.user.findUnique({
    where: { id: userId },
    select: { passwordHash: true, _count: { select: { passkeys: true } } },
  });
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

export async function insertPasskey(
  db: Db,
  passkey: { id: string; userId: string; publicKey: Uint8Array; counter: number; transports: string[]; name: string },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "Passkey" ("id", "userId", "publicKey", "counter", "transports", "name")
    VALUES (${passkey.id}, ${passkey.userId}, ${Buffer.from(passkey.publicKey)}, ${passkey.counter},
            ${passkey.transports}::text[], ${passkey.name})`;
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

/** Whether a usable proof covers this item (checked, not consumed). */
export async function hasStepUpItem(db: Db, use: ProofUse): Promise<boolean> {
  const [row] = await db.$queryRaw<{ found: boolean }[]>`
    SELECT true AS "found" FROM "StepUpProof" WHERE ${usableProof(use)}`;
  return row?.found === true;
}
