"use server";

import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { IdSchema } from "../../../security/input";
import { authedAction, EVERY_ROLE, type ActionResult } from "../../guards";
import {
  passkeyRegistrationOptions,
  registerPasskey,
  removeOwnPasskey,
  removePersonPasskeys,
  type PasskeyChange,
} from "./passkeys";
import { PasskeyIdSchema, ProofIdSchema } from "../step-up";

const STEP_UP_REQUIRED = {
  ok: false,
  code: "step-up.required",
  message: "Confirm it is you first (your password, or a passkey you already have), then try again.",
} as const;

function answer(change: PasskeyChange, notFound: string): ActionResult {
  if (change === "ok") return { ok: true, data: undefined };
  if (change === "step-up-required") return STEP_UP_REQUIRED;
  if (change === "not-found") return { ok: false, code: "not-found", message: notFound };
  if (change === "already-registered") {
    return {
      ok: false,
      code: "passkey.already-registered",
      message: "This passkey is already on your account. To add another, use a different device or security key.",
    };
  }
  if (change === "registered-elsewhere") {
    return {
      ok: false,
      code: "passkey.registered-elsewhere",
      message:
        "This passkey belongs to another account, so it cannot be added to yours. Create a new passkey on this device, or use a different security key.",
    };
  }
  return { ok: false, code: "passkey.refused", message: "The passkey could not be registered. Try again." };
}

export const passkeyRegistrationOptionsAction = authedAction(
  z.strictObject({ proofId: ProofIdSchema }),
  EVERY_ROLE,
  async (input, user, session) => {
    const options = await passkeyRegistrationOptions(user, { userId: user.id, sessionId: session.id, ...input });
    return options ? { ok: true, data: options } : STEP_UP_REQUIRED;
  },
);

const AttestationSchema = z.looseObject({
  id: z.string().min(1).max(1000),
  rawId: z.string().max(1000),
  type: z.literal("public-key"),
  response: z.looseObject({}),
});

export const registerPasskeyAction = authedAction(
  z.strictObject({
    proofId: ProofIdSchema,
    response: AttestationSchema,
    name: z.string().trim().min(1, "name it").max(60),
  }),
  EVERY_ROLE,
  async (input, user, session) => {
    const response = input.response as unknown as RegistrationResponseJSON;
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = answer(await registerPasskey(user, holder, response, input.name), "");
    if (result.ok) revalidatePath("/settings");
    return result;
  },
);

export const removePasskeyAction = authedAction(
  z.strictObject({ proofId: ProofIdSchema, passkeyId: PasskeyIdSchema }),
  EVERY_ROLE,
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = answer(await removeOwnPasskey(user, holder, input.passkeyId), "You have no such passkey.");
    if (result.ok) revalidatePath("/settings");
    return result;
  },
);

export const removePersonPasskeysAction = authedAction(
  z.strictObject({ proofId: ProofIdSchema.optional(), userId: IdSchema }),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const result = answer(await removePersonPasskeys(user, holder, input.userId), "No such person in your tenant.");
    if (result.ok) revalidatePath("/admin/policy");
    return result;
  },
);
