"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authedAction } from "../guards";
import { removeSsoSettings, saveSsoSettings, SsoSettingsSchema } from "./settings";

export const saveSsoSettingsAction = authedAction(
  SsoSettingsSchema.extend({ proofId: z.string().min(1).max(100).optional() }),
  ["ADMIN"],
  async ({ proofId, ...input }, user, session) => {
    const saved = await saveSsoSettings(user, input, { userId: user.id, sessionId: session.id, proofId });
    if (!saved.ok) return saved;
    revalidatePath("/admin/policy");
    return { ok: true, data: undefined };
  },
);

/** Removing the provider turns passwords back on: it loosens nothing a stolen session could use, so no step-up. */
export const removeSsoSettingsAction = authedAction(z.null(), ["ADMIN"], async (_input, user) => {
  await removeSsoSettings(user);
  revalidatePath("/admin/policy");
  return { ok: true, data: undefined };
});
