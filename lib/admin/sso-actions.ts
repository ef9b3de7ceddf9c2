"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { heldWords } from "@/lib/admin/change-words";
import { setSso } from "@/lib/admin/sso";
import { inviteToSso, SsoInviteSchema } from "@/lib/admin/sso-invite";
import { authedAction } from "@/lib/auth/guards";
import { removeSsoSettings, SsoSettingsSchema } from "@/lib/auth/sso/settings";

export const saveSsoSettingsAction = authedAction(
  SsoSettingsSchema.extend({ proofId: z.string().min(1).max(100).optional() }),
  ["ADMIN"],
  async ({ proofId, ...input }, user, session) => {
    const saved = await setSso(user, input, { userId: user.id, sessionId: session.id, proofId });
    if (!saved.ok) return saved;
    revalidatePath("/admin/policy");
    return { ok: true, data: { held: heldWords(saved.held) } };
  },
);

/** Removing the provider turns passwords back on: it gives no one a way in they did not have, so no step-up. */
export const removeSsoSettingsAction = authedAction(z.null(), ["ADMIN"], async (_input, user) => {
  await removeSsoSettings(user);
  revalidatePath("/admin/policy");
  return { ok: true, data: undefined };
});

export const inviteToSsoAction = authedAction(
  SsoInviteSchema.extend({ proofId: z.string().min(1).max(100).optional() }),
  ["ADMIN"],
  async ({ proofId, ...input }, user, session) => {
    const invited = await inviteToSso(user, input, { userId: user.id, sessionId: session.id, proofId });
    if (!invited.ok) return invited;
    revalidatePath("/admin/policy");
    return { ok: true, data: { held: heldWords(invited.held) } };
  },
);
