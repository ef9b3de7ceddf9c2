import "server-only";
import type { Db, Tx } from "../../db";
import { Prisma, type Role } from "../../generated/prisma/client";

// The single sign-on statements: a tenant's provider settings, the provider subjects bound to people, and the
// people a first sign-in may be bound to.

// A type, not an interface: a held admin change stores it as a JSON record.
export type SsoSettingsRow = {
  tenantId: string;
  displayName: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  emailDomain: string;
  groupsClaim: string | null;
  roleMap: Record<string, Role>;
  required: boolean;
};

const SETTINGS = Prisma.raw(
  `"tenantId", "displayName", "issuer", "clientId", "clientSecret", "emailDomain", "groupsClaim", "roleMap", "required"`,
);

export async function findSsoByTenant(db: Db, tenantId: string): Promise<SsoSettingsRow | null> {
  const [row = null] = await db.$queryRaw<SsoSettingsRow[]>`
    SELECT ${SETTINGS} FROM "TenantSso" WHERE "tenantId" = ${tenantId}`;
  return row;
}

export async function findSsoByDomain(db: Db, emailDomain: string): Promise<SsoSettingsRow | null> {
  const [row = null] = await db.$queryRaw<SsoSettingsRow[]>`
    SELECT ${SETTINGS} FROM "TenantSso" WHERE "emailDomain" = ${emailDomain}`;
  return row;
}

/** The tenant's settings, locked until the transaction ends (a save or a held change compares and writes them). */
export async function lockSso(tx: Tx, tenantId: string): Promise<SsoSettingsRow | null> {
  const [row = null] = await tx.$queryRaw<SsoSettingsRow[]>`
    SELECT ${SETTINGS} FROM "TenantSso" WHERE "tenantId" = ${tenantId} FOR UPDATE`;
  return row;
}

// Any constant no other advisory lock in the project uses: with the domain's hash, one claim of a domain at a time.
const DOMAIN_LOCK = 7_100_116;

// Any constant no other advisory lock in the project uses: with the tenant's hash, its password sign-ins (each holding
// it shared from its check to its session) against requiring SSO (holding it alone while it ends their sessions).
const PASSWORD_SIGN_IN_LOCK = 7_100_118;

/**
 * Holds the tenant's password sign-ins until the transaction ends: `shared` by a sign-in from the moment it reads
 * whether SSO is required until its session is written, `alone` by requiring SSO before it ends the password
 * sessions, so a sign-in either sees SSO required or has its session ended with the rest.
 */
export async function lockPasswordSignIns(tx: Tx, tenantId: string, mode: "shared" | "alone"): Promise<void> {
  if (mode === "shared")
    await tx.$queryRaw`SELECT pg_advisory_xact_lock_shared(${PASSWORD_SIGN_IN_LOCK}::int, hashtext(${tenantId})) IS NULL AS "locked"`;
  else
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(${PASSWORD_SIGN_IN_LOCK}::int, hashtext(${tenantId})) IS NULL AS "locked"`;
}

/** Locks the email domain until the transaction ends: a save or a held change checks and claims it alone. */
export async function lockEmailDomain(tx: Tx, emailDomain: string): Promise<void> {
  await tx.$queryRaw`SELECT pg_advisory_xact_lock(${DOMAIN_LOCK}::int, hashtext(${emailDomain})) IS NULL AS "locked"`;
}

/**
 * Who else holds this email domain: another tenant signs its people in by it ("settings"), proposed it in a change
 * still waiting ("held"), or has people whose email is at it ("people"); null when none does.
 */
export async function domainClaimElsewhere(
  db: Db,
  tenantId: string,
  emailDomain: string,
): Promise<"settings" | "held" | "people" | null> {
  const [row] = await db.$queryRaw<{ claim: "settings" | "held" | "people" | null }[]>`
    SELECT CASE
      WHEN EXISTS (SELECT 1 FROM "TenantSso" WHERE "emailDomain" = ${emailDomain} AND "tenantId" <> ${tenantId})
        THEN 'settings'
      WHEN EXISTS (SELECT 1 FROM "AdminChange" WHERE "kind" = 'sso' AND "status" = 'pending'
                   AND "change"->>'emailDomain' = ${emailDomain} AND "tenantId" <> ${tenantId})
        THEN 'held'
      WHEN EXISTS (SELECT 1 FROM "User" WHERE lower(split_part("email", '@', 2)) = ${emailDomain}
                   AND "tenantId" <> ${tenantId})
        THEN 'people'
    END AS "claim"`;
  return row.claim;
}

export async function upsertSso(tx: Tx, row: SsoSettingsRow): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO "TenantSso" ("tenantId", "displayName", "issuer", "clientId", "clientSecret", "emailDomain",
                             "groupsClaim", "roleMap", "required")
    VALUES (${row.tenantId}, ${row.displayName}, ${row.issuer}, ${row.clientId}, ${row.clientSecret},
            ${row.emailDomain}, ${row.groupsClaim}, ${JSON.stringify(row.roleMap)}::jsonb, ${row.required})
    ON CONFLICT ("tenantId") DO UPDATE SET
      "displayName" = EXCLUDED."displayName", "issuer" = EXCLUDED."issuer", "clientId" = EXCLUDED."clientId",
      "clientSecret" = EXCLUDED."clientSecret", "emailDomain" = EXCLUDED."emailDomain",
      "groupsClaim" = EXCLUDED."groupsClaim", "roleMap" = EXCLUDED."roleMap", "required" = EXCLUDED."required",
      "updatedAt" = CURRENT_TIMESTAMP`;
}

export async function deleteSso(tx: Tx, tenantId: string): Promise<number> {
  return tx.$executeRaw`DELETE FROM "TenantSso" WHERE "tenantId" = ${tenantId}`;
}

/** Whether the person's tenant requires single sign-on (passwords off for all but admins). */
export async function ssoRequiredFor(db: Db, tenantId: string): Promise<boolean> {
  const [row] = await db.$queryRaw<{ required: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM "TenantSso" WHERE "tenantId" = ${tenantId} AND "required") AS "required"`;
  return row.required;
}

export interface SsoPerson {
  id: string;
  email: string;
  name: string;
  role: Role;
  tenantId: string;
  active: boolean;
}

const PERSON = Prisma.raw(`u."id", u."email", u."name", u."role"::text AS "role", u."tenantId", u."active"`);

/** The person this provider subject is bound to in this tenant, the binding locked. */
export async function lockBoundPerson(
  tx: Tx,
  binding: { tenantId: string; issuer: string; subject: string },
): Promise<SsoPerson | null> {
  const [row = null] = await tx.$queryRaw<SsoPerson[]>`
    SELECT ${PERSON} FROM "SsoIdentity" i JOIN "User" u ON u."id" = i."userId" AND u."tenantId" = i."tenantId"
    WHERE i."tenantId" = ${binding.tenantId} AND i."issuer" = ${binding.issuer} AND i."subject" = ${binding.subject}
    FOR UPDATE OF i`;
  return row;
}

/** Marks the subject's binding used by a sign-in. */
export async function markBindingUsed(
  tx: Tx,
  binding: { tenantId: string; issuer: string; subject: string },
): Promise<void> {
  await tx.$executeRaw`
    UPDATE "SsoIdentity" SET "lastSignInAt" = CURRENT_TIMESTAMP
    WHERE "tenantId" = ${binding.tenantId} AND "issuer" = ${binding.issuer} AND "subject" = ${binding.subject}`;
}

/** The tenant's person with this email who is not yet bound to any subject of this provider, locked. */
export async function lockUnboundPersonByEmail(
  tx: Tx,
  binding: { tenantId: string; issuer: string; email: string },
): Promise<SsoPerson | null> {
  const [row = null] = await tx.$queryRaw<SsoPerson[]>`
    SELECT ${PERSON} FROM "User" u
    WHERE u."tenantId" = ${binding.tenantId} AND u."email" = ${binding.email} AND u."role" <> 'AGENT'
      AND NOT EXISTS (SELECT 1 FROM "SsoIdentity" i
                      WHERE i."userId" = u."id" AND i."tenantId" = u."tenantId" AND i."issuer" = ${binding.issuer})
    FOR UPDATE OF u`;
  return row;
}

/** The tenant's person (not an agent) with this email, or null. */
export async function findTenantPersonByEmail(db: Db, tenantId: string, email: string): Promise<SsoPerson | null> {
  const [row = null] = await db.$queryRaw<SsoPerson[]>`
    SELECT ${PERSON} FROM "User" u WHERE u."email" = ${email} AND u."tenantId" = ${tenantId} AND u."role" <> 'AGENT'`;
  return row;
}

/** Whether this provider subject is already bound to someone in this tenant. */
export async function subjectBound(db: Db, binding: { tenantId: string; issuer: string; subject: string }) {
  const [row] = await db.$queryRaw<{ bound: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM "SsoIdentity" WHERE "tenantId" = ${binding.tenantId}
                   AND "issuer" = ${binding.issuer} AND "subject" = ${binding.subject}) AS "bound"`;
  return row.bound;
}

/**
 * Binds the subject to the person; false, binding nothing, when the subject or the person is already bound for this
 * provider (a concurrent first sign-in of the same subject got there first).
 */
export async function insertIdentity(
  tx: Tx | Db,
  identity: { id: string; tenantId: string; issuer: string; subject: string; userId: string; boundBy: string },
): Promise<boolean> {
  const inserted = await tx.$executeRaw`
    INSERT INTO "SsoIdentity" ("id", "tenantId", "issuer", "subject", "userId", "boundBy", "lastSignInAt")
    VALUES (${identity.id}, ${identity.tenantId}, ${identity.issuer}, ${identity.subject}, ${identity.userId},
            ${identity.boundBy}, CASE WHEN ${identity.boundBy} = 'admin' THEN NULL ELSE CURRENT_TIMESTAMP END)
    ON CONFLICT DO NOTHING`;
  return inserted === 1;
}

/** Sets a person's role as the provider's groups map it. */
export async function setPersonRole(tx: Tx, tenantId: string, userId: string, role: Role): Promise<void> {
  await tx.$executeRaw`
    UPDATE "User" SET "role" = ${role}::"Role" WHERE "id" = ${userId} AND "tenantId" = ${tenantId}`;
}

export async function insertSsoAudit(
  db: Tx | Db,
  entry: { tenantId: string; actorId: string; action: string; detail: unknown },
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "AuditLog" ("tenantId", "actorId", "action", "detail")
    VALUES (${entry.tenantId}, ${entry.actorId}, ${entry.action}, ${JSON.stringify(entry.detail)}::jsonb)`;
}
