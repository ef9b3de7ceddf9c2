import type { Role } from "../../generated/prisma/client";
import { transaction, type Tx } from "../../db";
import { newId } from "../../ids";
import {
  insertIdentity,
  insertSsoAudit,
  lockBoundPerson,
  lockSso,
  lockUnboundPersonByEmail,
  markBindingUsed,
  setPersonRole,
  subjectBound,
  type SsoPerson,
  type SsoSettingsRow,
} from "./sql";

/** What the provider said about who signed in, from its ID token and userinfo. */
export interface ProviderClaims {
  sub: string;
  email?: unknown;
  email_verified?: unknown;
  [claim: string]: unknown;
}

export type SsoRefusal = "sso.unverified-email" | "sso.unknown-person" | "sso.deactivated" | "sso.no-role";

export type Bound = { ok: true; person: SsoPerson } | { ok: false; code: SsoRefusal };

/**
 * The toolgate person the provider's subject stands for. A subject seen before keeps its person. A new one is bound
 * to the tenant's person with that email only when the provider says the email is verified: an unverified email is
 * whatever the person typed at the provider, so binding by it would hand them someone else's account. A deactivated
 * person, or one whose groups map to no role, is refused before anything is bound or changed.
 */
export async function bindSubject(settings: SsoSettingsRow, claims: ProviderClaims): Promise<Bound> {
  const binding = { tenantId: settings.tenantId, issuer: settings.issuer, subject: claims.sub };
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : null;
  const mapped = mappedRole(settings, claims);
  return transaction(async (tx): Promise<Bound> => {
    const bound = await lockBoundPerson(tx, binding);
    let person = bound;
    if (!person) {
      if (!email || claims.email_verified !== true) return { ok: false, code: "sso.unverified-email" };
      person = await lockUnboundPersonByEmail(tx, { ...binding, email });
      if (!person) return { ok: false, code: "sso.unknown-person" };
    }
    if (!person.active) return { ok: false, code: "sso.deactivated" };
    if (mapped === "sso.no-role") return { ok: false, code: "sso.no-role" };
    const inserted =
      !bound &&
      (await insertIdentity(tx, { id: newId("sso"), ...binding, userId: person.id, boundBy: "verified-email" }));
    if (inserted)
      await insertSsoAudit(tx, {
        tenantId: settings.tenantId,
        actorId: person.id,
        action: "sso.bound",
        detail: { issuer: settings.issuer, subject: claims.sub, by: "verified-email" },
      });
    else {
      // Bound before, or by another first sign-in of this subject since it was looked up: then only to this person.
      if (!bound && (await lockBoundPerson(tx, binding))?.id !== person.id)
        return { ok: false, code: "sso.unknown-person" };
      await markBindingUsed(tx, binding);
    }
    if (!mapped || mapped.role === person.role) return { ok: true, person };
    await setPersonRole(tx, person.tenantId, person.id, mapped.role);
    await insertSsoAudit(tx, {
      tenantId: person.tenantId,
      actorId: person.id,
      action: "sso.role-mapped",
      detail: { from: person.role, to: mapped.role, groups: mapped.groups },
    });
    return { ok: true, person: { ...person, role: mapped.role } };
  });
}

const RANK: Record<Role, number> = { AGENT: 0, SUPERVISOR: 1, ADMIN: 2 };

/**
 * With a groups claim and a mapping, the provider's groups decide the role (the highest mapped one) and a person
 * whose groups map to none is refused; without them (null) the role is as set in toolgate.
 */
function mappedRole(
  settings: SsoSettingsRow,
  claims: ProviderClaims,
): { role: Role; groups: string[] } | "sso.no-role" | null {
  if (!settings.groupsClaim || Object.keys(settings.roleMap).length === 0) return null;
  const raw = claims[settings.groupsClaim];
  const groups = Array.isArray(raw)
    ? raw.filter((group) => typeof group === "string")
    : typeof raw === "string"
      ? [raw]
      : [];
  const roles = groups.map((group) => settings.roleMap[group]).filter((role): role is Role => role !== undefined);
  if (roles.length === 0) return "sso.no-role";
  return { role: roles.reduce((best, each) => (RANK[each] > RANK[best] ? each : best)), groups };
}

/** An admin's invitation: a person of the tenant bound to a subject of the tenant's provider before they sign in. */
export type SsoInvitation = {
  userId: string;
  email: string;
  issuer: string;
  subject: string;
};

/**
 * Binds an invited person once the two-admin rule let the invitation through, in that transaction: only while the
 * tenant's provider is still the one invited to and neither the person nor the subject is bound to it, else "stale".
 */
export async function bindInvited(
  tx: Tx,
  tenantId: string,
  invitation: SsoInvitation,
  by: { proposedById: string; changeId: string; approvedById: string | null },
): Promise<"applied" | "stale"> {
  const settings = await lockSso(tx, tenantId);
  if (settings?.issuer !== invitation.issuer) return "stale";
  const binding = { tenantId, issuer: invitation.issuer, subject: invitation.subject };
  if (await subjectBound(tx, binding)) return "stale";
  const person = await lockUnboundPersonByEmail(tx, { tenantId, issuer: invitation.issuer, email: invitation.email });
  if (person?.id !== invitation.userId) return "stale";
  if (!(await insertIdentity(tx, { id: newId("sso"), ...binding, userId: person.id, boundBy: "admin" })))
    return "stale";
  await insertSsoAudit(tx, {
    tenantId,
    actorId: by.proposedById,
    action: "sso.bound",
    detail: { ...binding, userId: person.id, by: "admin", changeId: by.changeId, approvedById: by.approvedById },
  });
  return "applied";
}
