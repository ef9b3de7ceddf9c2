"use server";

import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { passkeyRegistrationOptions, registerPasskey } from "@/lib/approvals/step-up";
import { authedAction } from "@/lib/auth/guards";

const EVERYONE = ["AGENT", "SUPERVISOR", "ADMIN"] as const;

export const passkeyRegistrationOptionsAction = authedAction(z.strictObject({}), EVERYONE, async (_input, user) => ({
  ok: true,
  data: await passkeyRegistrationOptions(user),
}));

const AttestationSchema = z.looseObject({
  id: z.string().min(1).max(1000),
  rawId: z.string().max(1000),
  type: z.literal("public-key"),
  response: z.looseObject({}),
});

export const registerPasskeyAction = authedAction(
  z.strictObject({ response: AttestationSchema, name: z.string().trim().min(1, "name it").max(60) }),
  EVERYONE,
  async (input, user) => {
    if (!(await registerPasskey(user, input.response as unknown as RegistrationResponseJSON, input.name))) {
      return { ok: false, code: "passkey.refused", message: "The passkey could not be registered. Try again." };
    }
    revalidatePath("/settings");
    return { ok: true, data: undefined };
  },
);
