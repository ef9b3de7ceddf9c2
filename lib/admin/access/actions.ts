"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authedAction } from "@/lib/auth/guards";
import { ProofIdSchema } from "@/lib/auth/step-up/step-up";
import { IdSchema } from "@/lib/security/input";
import { heldWords, STEP_UP_REQUIRED } from "../changes/words";
import { createAgentKey, revokeAgentKey } from "./agent-keys";
import { endSessions } from "./people";
import { setRefundPermission } from "./refund-permission";
import { setSelfRegistration } from "./self-registration";
import { SsoSettingsSchema } from "@/lib/auth/sso/settings";
import { removeSso, setSso } from "./sso";
import { inviteToSso, SsoInviteSchema } from "./sso-invite";

export const setRefundPermissionAction = authedAction(
  z.strictObject({ userId: IdSchema, canRefund: z.boolean(), proofId: ProofIdSchema.optional() }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = await setRefundPermission(user, input.userId, input.canRefund, holder);
    if (result === "not-found") return { ok: false, code: "not-found", message: "No such agent in your tenant." };
    if (result === "step-up-required") {
      return {
        ok: false,
        code: STEP_UP_REQUIRED,
        message: "Granting refunds needs you to confirm it is you first. Nothing was changed.",
      };
    }
    revalidatePath("/admin/policy");
    if (typeof result === "object") return { ok: true, data: { changed: false, held: heldWords(result) } };
    return { ok: true, data: { changed: result === "changed", held: null } };
  },
);

export const createKeyAction = authedAction(
  z.strictObject({ userId: IdSchema, proofId: ProofIdSchema.optional() }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const created = await createAgentKey(user, input.userId, holder);
    if (!created.ok && created.problem === "not-found")
      return { ok: false, code: "not-found", message: "No such agent in your tenant." };
    if (!created.ok) {
      return {
        ok: false,
        code: STEP_UP_REQUIRED,
        message: "Creating a key needs you to confirm it is you first. No key was created.",
      };
    }
    revalidatePath("/admin/policy");
    return { ok: true, data: { id: created.id, key: created.key, held: heldWords(created.held) } };
  },
);

export const revokeKeyAction = authedAction(z.strictObject({ keyId: IdSchema }), ["ADMIN"], async (input, user) => {
  if (!(await revokeAgentKey(user, input.keyId)))
    return { ok: false, code: "not-found", message: "No such active key in your tenant." };
  revalidatePath("/admin/policy");
  return { ok: true, data: undefined };
});

const EndSessionsSchema = z.union([z.strictObject({ sessionId: IdSchema }), z.strictObject({ userId: IdSchema })]);

export const endSessionsAction = authedAction(EndSessionsSchema, ["ADMIN"], async (input, user) => {
  const count = await endSessions(user, input);
  if (count === 0) return { ok: false, code: "not-found", message: "No such live session in your tenant." };
  revalidatePath("/admin/policy");
  return { ok: true, data: { count } };
});

export const setSelfRegistrationAction = authedAction(
  z.strictObject({ enabled: z.boolean(), proofId: ProofIdSchema.optional() }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = await setSelfRegistration(user, input.enabled, holder);
    if (result === "step-up-required") {
      return {
        ok: false,
        code: STEP_UP_REQUIRED,
        message: "Allowing clients that register themselves needs you to confirm it is you first. Nothing was changed.",
      };
    }
    revalidatePath("/admin/policy");
    return { ok: true, data: { held: typeof result === "object" ? heldWords(result) : null } };
  },
);

export const saveSsoSettingsAction = authedAction(
  SsoSettingsSchema.extend({ proofId: ProofIdSchema.optional() }),
  ["ADMIN"],
  async ({ proofId, ...input }, user, session) => {
    const saved = await setSso(user, input, { userId: user.id, sessionId: session.id, proofId });
    if (!saved.ok) return saved;
    revalidatePath("/admin/policy");
    return { ok: true, data: { held: heldWords(saved.held), passwordSessionsEnded: saved.passwordSessionsEnded } };
  },
);

/** Removing the provider turns passwords back on: a step-up when the tenant requires it, since that is a way in. */
export const removeSsoSettingsAction = authedAction(
  z.strictObject({ proofId: ProofIdSchema.optional() }),
  ["ADMIN"],
  async ({ proofId }, user, session) => {
    const removed = await removeSso(user, { userId: user.id, sessionId: session.id, proofId });
    if (removed === "step-up-required") {
      return {
        ok: false,
        code: STEP_UP_REQUIRED,
        message:
          "Removing single sign-on the tenant requires needs you to confirm it is you first. Nothing was changed.",
      };
    }
    revalidatePath("/admin/policy");
    return { ok: true, data: undefined };
  },
);

export const inviteToSsoAction = authedAction(
  SsoInviteSchema.extend({ proofId: ProofIdSchema.optional() }),
  ["ADMIN"],
  async ({ proofId, ...input }, user, session) => {
    const invited = await inviteToSso(user, input, { userId: user.id, sessionId: session.id, proofId });
    if (!invited.ok) return invited;
    revalidatePath("/admin/policy");
    return { ok: true, data: { held: heldWords(invited.held) } };
  },
);
