import { z } from "zod";
import { bindInvited, type SsoInvitation } from "../../auth/sso/binding";
import { findSsoByTenant, findTenantPersonByEmail, subjectBound } from "../../auth/sso/sql";
import { consumeStepUpFor, type StepUpHolder } from "../../auth/step-up/step-up";
import { db, transaction } from "../../db";
import { classifyAdminChange } from "../changes/loosening/loosening";
import { holdChange, type HeldChange } from "../changes/two-admin";
import type { Admin } from "../sql";

export const SsoInviteSchema = z.strictObject({
  email: z.string().trim().toLowerCase().email().max(200),
  subject: z.string().trim().min(1).max(255),
});
export type SsoInviteInput = z.infer<typeof SsoInviteSchema>;

export type SsoInviteResult =
  | { ok: true; held: HeldChange | null }
  | { ok: false; code: "sso.not-configured" | "not-found" | "sso.subject-bound" | "step-up.required"; message: string };

/**
 * An admin's invitation: binds a supervisor or admin to a subject of the tenant's provider before their first sign-in
 * (for a provider that does not verify emails). Whoever holds that subject signs in as the person, so it consumes the
 * admin's step-up and waits for a second admin (or the delay), like any change of who may sign in as whom.
 */
export async function inviteToSso(admin: Admin, input: SsoInviteInput, holder: StepUpHolder): Promise<SsoInviteResult> {
  const settings = await findSsoByTenant(db, admin.tenantId);
  if (!settings)
    return { ok: false, code: "sso.not-configured", message: "Set up single sign-on before inviting anyone to it." };
  const person = await findTenantPersonByEmail(db, admin.tenantId, input.email);
  if (!person)
    return { ok: false, code: "not-found", message: "No supervisor or admin of your tenant has that email." };
  const binding = { tenantId: admin.tenantId, issuer: settings.issuer, subject: input.subject };
  if (await subjectBound(db, binding))
    return { ok: false, code: "sso.subject-bound", message: "That provider ID is already bound to someone here." };
  return transaction(async (tx) => {
    const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.sso-invite", ...input });
    if (!stepUp)
      return {
        ok: false,
        code: "step-up.required",
        message: "Inviting someone to single sign-on needs you to confirm it is you first. Nothing was changed.",
      };
    const change: SsoInvitation = {
      userId: person.id,
      email: person.email,
      issuer: settings.issuer,
      subject: input.subject,
    };
    if (classifyAdminChange({ kind: "sso.invite" }) === "needs-second-admin")
      return { ok: true, held: await holdChange(tx, admin, { kind: "sso-invite", change, base: {} }, stepUp) };
    const by = { proposedById: admin.id, changeId: "(none)", approvedById: admin.id };
    return (await bindInvited(tx, admin.tenantId, change, by)) === "applied"
      ? { ok: true, held: null }
      : { ok: false, code: "sso.subject-bound", message: "That person or provider ID is already bound here." };
  });
}
