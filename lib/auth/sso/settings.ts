import { z } from "zod";
import { canonicalJson, sha256Hex } from "../../canonical";
import { db, transaction, type Tx } from "../../db";
import { decryptSecret, encryptSecret } from "../../security/secrets";
import { sessionLimits } from "../sessions";
import { endTenantPasswordSessions } from "../sql";
import { consumeStepUpFor, type StepUpHolder, type StepUpMethod } from "../step-up/step-up";
import { discover, IssuerRefused } from "./issuer";
import {
  deleteSso,
  domainClaimElsewhere,
  findSsoByDomain,
  findSsoByTenant,
  insertSsoAudit,
  lockEmailDomain,
  lockPasswordSignIns,
  lockSso,
  upsertSso,
  type SsoSettingsRow,
} from "./sql";

/** Where a tenant's client secret is stored, so a ciphertext copied to another tenant does not open. */
export const clientSecretContext = (tenantId: string) => `TenantSso.clientSecret:${tenantId}`;

const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "a domain such as example.com");

export const SsoSettingsSchema = z.strictObject({
  displayName: z.string().trim().min(1).max(60),
  issuer: z.string().trim().min(1).max(500),
  clientId: z.string().trim().min(1).max(200),
  /** Empty keeps the stored secret (it is never shown again). */
  clientSecret: z.string().max(500),
  emailDomain: Domain,
  groupsClaim: z
    .string()
    .trim()
    .max(100)
    .regex(/^[A-Za-z0-9_:./-]*$/, "letters, digits and _ : . / -"),
  roleMap: z
    .array(z.strictObject({ group: z.string().trim().min(1).max(200), role: z.enum(["SUPERVISOR", "ADMIN"]) }))
    .max(50),
  required: z.boolean(),
});
export type SsoSettingsInput = z.infer<typeof SsoSettingsSchema>;

export type SsoSettingsResult<Held> =
  | { ok: true; held: Held | null; passwordSessionsEnded: number }
  | {
      ok: false;
      code: "sso.issuer-refused" | SsoDomainRefusal | "sso.secret-missing" | "step-up.required";
      message: string;
    };

interface Admin {
  id: string;
  tenantId: string;
}

export type SsoDomainRefusal = "sso.domain-taken" | "sso.domain-in-use";

/**
 * Whether the tenant may newly claim this email domain, in the caller's transaction with the domain locked until it
 * ends (so two tenants claiming one domain at once are answered one after the other): not while another tenant signs
 * in by it or has a change for it waiting (`sso.domain-taken`), nor while another tenant has people with an email at
 * it (`sso.domain-in-use`), whose sign-in by email would otherwise be sent to this tenant's provider.
 */
async function claimDomain(tx: Tx, tenantId: string, emailDomain: string): Promise<SsoDomainRefusal | null> {
  await lockEmailDomain(tx, emailDomain);
  const claim = await domainClaimElsewhere(tx, tenantId, emailDomain);
  return claim === null ? null : claim === "people" ? "sso.domain-in-use" : "sso.domain-taken";
}

const DOMAIN_WORDS: Record<SsoDomainRefusal, (domain: string) => string> = {
  "sso.domain-taken": (domain) =>
    `Another tenant already signs in people of ${domain}, or has a change for it waiting. Use your own email domain.`,
  "sso.domain-in-use": (domain) =>
    `People of another tenant have email addresses at ${domain}, so they would be sent to your provider. Use an email domain only your own people have.`,
};

/** A change as the two-admin rule holds it: the row to store, and the digest of the row it replaces (or null). */
export interface SsoProposal {
  change: SsoSettingsRow;
  base: { stored: string | null };
}

/**
 * Holds the change for a second admin when the two-admin rule says so (docs/decisions/015), else null and it applies
 * now; handed in by the admin feature, which owns that rule. `widensSignIn`: the change lets someone sign in as someone
 * they could not before (a new provider, client, domain or role mapping).
 */
export type HoldSsoChange<Held> = (
  tx: Tx,
  proposal: SsoProposal,
  stepUp: StepUpMethod,
  widensSignIn: boolean,
) => Promise<Held | null>;

/** The digest a held change compares: the stored row as it is, ciphertext included (fresh at every save). */
const storedDigest = (row: SsoSettingsRow | null) => (row ? sha256Hex(canonicalJson(row)) : null);

/** Whether the new settings let someone sign in as someone they could not before. */
function widensSignIn(stored: SsoSettingsRow | null, next: SsoSettingsRow): boolean {
  if (!stored) return true;
  const who = (row: SsoSettingsRow) =>
    canonicalJson([row.issuer, row.clientId, row.emailDomain, row.groupsClaim, row.roleMap]);
  return who(stored) !== who(next);
}

/**
 * Sets the tenant's OpenID provider. The issuer's discovery document is read first (through the outbound guard), so
 * an address that does not answer as that issuer is refused before anything is stored; then the admin's step-up
 * proof for this issuer and domain is consumed. A new provider, client, domain or role mapping could sign anyone in
 * as any person of the tenant (a lone admin as the second supervisor of a large refund), so `hold` may keep it for a
 * second admin; the rest (the button's name, a new secret for the same client, requiring SSO) applies at once. The
 * client secret is stored encrypted; the audit names neither it nor the client id. `passwordSessionsEnded`: how many
 * password sessions requiring SSO ended now (none while held: they end when the change applies).
 */
export async function saveSsoSettings<Held>(
  admin: Admin,
  input: SsoSettingsInput,
  holder: StepUpHolder,
  hold: HoldSsoChange<Held>,
): Promise<SsoSettingsResult<Held>> {
  try {
    await discover(input.issuer);
  } catch (error) {
    if (!(error instanceof IssuerRefused)) throw error;
    return { ok: false, code: "sso.issuer-refused", message: `The issuer cannot be used: ${error.message}.` };
  }
  return transaction(async (tx): Promise<SsoSettingsResult<Held>> => {
    const refused = await claimDomain(tx, admin.tenantId, input.emailDomain);
    const stored = await lockSso(tx, admin.tenantId);
    if (refused && stored?.emailDomain !== input.emailDomain)
      return { ok: false, code: refused, message: DOMAIN_WORDS[refused](input.emailDomain) };
    if (!input.clientSecret && !stored)
      return { ok: false, code: "sso.secret-missing", message: "Enter the client secret the provider gave you." };
    const stepUp = await consumeStepUpFor(tx, holder, {
      kind: "admin.sso",
      issuer: input.issuer,
      emailDomain: input.emailDomain,
    });
    if (!stepUp)
      return {
        ok: false,
        code: "step-up.required",
        message: "Setting single sign-on needs you to confirm it is you first. Nothing was changed.",
      };
    const row: SsoSettingsRow = {
      tenantId: admin.tenantId,
      displayName: input.displayName,
      issuer: input.issuer,
      clientId: input.clientId,
      clientSecret: input.clientSecret
        ? encryptSecret(input.clientSecret, clientSecretContext(admin.tenantId))
        : stored!.clientSecret,
      emailDomain: input.emailDomain,
      groupsClaim: input.groupsClaim || null,
      roleMap: Object.fromEntries(input.roleMap.map((entry) => [entry.group, entry.role])),
      required: input.required,
    };
    const proposal = { change: row, base: { stored: storedDigest(stored) } };
    const held = await hold(tx, proposal, stepUp, widensSignIn(stored, row));
    if (held) return { ok: true, held, passwordSessionsEnded: 0 };
    const passwordSessionsEnded = await putSsoInForce(tx, stored, row, {
      actorId: admin.id,
      detail: { secretChanged: Boolean(input.clientSecret), stepUp },
    });
    return { ok: true, held: null, passwordSessionsEnded };
  });
}

/**
 * Stores the settings and audits them (`sso.set`), in the caller's transaction: the one place settings take effect,
 * saved at once or applied from a held change. When they newly require single sign-on, every open session of the
 * tenant that a password signed in ends with them, since refusing password sign-ins alone would leave those people in
 * for up to SESSION_MAX_SECONDS; admins' end too, the one making the change included (break-glass signs an admin in
 * again, recorded), and sessions the provider signed in stay. Returns how many sessions ended, which the audit
 * records.
 */
async function putSsoInForce(
  tx: Tx,
  stored: SsoSettingsRow | null,
  row: SsoSettingsRow,
  audit: { actorId: string; detail: Record<string, unknown> },
): Promise<number> {
  await upsertSso(tx, row);
  const nowRequired = row.required && !stored?.required;
  // Alone against password sign-ins, so one that read "not required" has written its session before they end.
  if (nowRequired) await lockPasswordSignIns(tx, row.tenantId, "alone");
  const ended = nowRequired ? await endTenantPasswordSessions(tx, row.tenantId, "sso-required", sessionLimits()) : 0;
  await insertSsoAudit(tx, {
    tenantId: row.tenantId,
    actorId: audit.actorId,
    action: "sso.set",
    detail: { ...ssoAuditDetail(row), ...audit.detail, ...(nowRequired ? { passwordSessionsEnded: ended } : {}) },
  });
  return ended;
}

/** What the audit and a held change's lines say about settings: never the secret or the client id. */
export function ssoAuditDetail(row: SsoSettingsRow) {
  return {
    issuer: row.issuer,
    emailDomain: row.emailDomain,
    required: row.required,
    groupsClaim: row.groupsClaim,
    roleMap: row.roleMap,
  };
}

/**
 * Applies a held change once a second admin approved it (or its delay passed), in their transaction: only over the
 * settings it was proposed against, else "stale"; and only while no other tenant took its email domain meanwhile,
 * else why not (the change can never apply). A change that requires SSO ends the password sessions now, not when
 * it was proposed.
 */
export async function applyHeldSso(
  tx: Tx,
  proposal: SsoProposal,
  by: { proposedById: string; changeId: string; approvedById: string | null },
): Promise<"applied" | "stale" | SsoDomainRefusal> {
  const refused = await claimDomain(tx, proposal.change.tenantId, proposal.change.emailDomain);
  const stored = await lockSso(tx, proposal.change.tenantId);
  if (storedDigest(stored) !== proposal.base.stored) return "stale";
  if (refused && stored?.emailDomain !== proposal.change.emailDomain) return refused;
  await putSsoInForce(tx, stored, proposal.change, {
    actorId: by.proposedById,
    detail: { changeId: by.changeId, approvedById: by.approvedById },
  });
  return "applied";
}

/**
 * Removes the tenant's provider: passwords work again for everyone, bound subjects stay for a later provider. A
 * provider the tenant requires is its supervisors' only way in, so removing it turns their passwords back on: when
 * `needsStepUp` (the admin feature's rule) says so for the stored requirement, the admin's step-up for that issuer is
 * consumed first, and without it nothing is removed.
 */
export async function removeSsoSettings(
  admin: Admin,
  holder: StepUpHolder,
  needsStepUp: (required: boolean) => boolean,
): Promise<"removed" | "none" | "step-up-required"> {
  return transaction(async (tx) => {
    const stored = await lockSso(tx, admin.tenantId);
    if (!stored) return "none";
    let stepUp: StepUpMethod | null = null;
    if (needsStepUp(stored.required)) {
      stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.sso-removed", issuer: stored.issuer });
      if (!stepUp) return "step-up-required";
    }
    await deleteSso(tx, admin.tenantId);
    await insertSsoAudit(tx, {
      tenantId: admin.tenantId,
      actorId: admin.id,
      action: "sso.removed",
      detail: stepUp ? { stepUp } : {},
    });
    return "removed";
  });
}

/** The settings as the admin's form shows them: never the secret. */
export async function ssoSettingsOf(tenantId: string) {
  const row = await findSsoByTenant(db, tenantId);
  if (!row) return null;
  return {
    displayName: row.displayName,
    issuer: row.issuer,
    clientId: row.clientId,
    emailDomain: row.emailDomain,
    groupsClaim: row.groupsClaim,
    roleMap: row.roleMap,
    required: row.required,
  };
}

export type SsoSettingsView = NonNullable<Awaited<ReturnType<typeof ssoSettingsOf>>>;

/** The stored client secret, opened. */
export function openClientSecret(row: SsoSettingsRow): string {
  return decryptSecret(row.clientSecret, clientSecretContext(row.tenantId));
}

/** The sign-in button of the tenant a link names (`/login?sso=<tenant id>`), or null. */
export async function ssoButtonFor(tenantId: string | undefined): Promise<{ id: string; displayName: string } | null> {
  if (!tenantId || !/^[A-Za-z0-9_-]{1,100}$/.test(tenantId)) return null;
  const row = await findSsoByTenant(db, tenantId);
  return row && { id: row.tenantId, displayName: row.displayName };
}

/** The sign-in button of the tenant whose people have this email's domain, or null. */
export async function ssoButtonForEmail(
  email: string | undefined,
): Promise<{ id: string; displayName: string } | null> {
  const domain = email?.split("@")[1]?.trim().toLowerCase();
  if (!domain || domain.length > 200) return null;
  const row = await findSsoByDomain(db, domain);
  return row && { id: row.tenantId, displayName: row.displayName };
}
