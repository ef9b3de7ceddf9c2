"use server";

import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { z } from "zod";
import { authedAction, EVERY_ROLE } from "../guards";
import {
  beginStepUp,
  PasskeyIdSchema,
  ProofIdSchema,
  proveWithPasskey,
  proveWithPassword,
  StepUpPurposeSchema,
  type PasswordProof,
} from "./step-up";

// The step-up ceremony (decision 014), for anyone signed in: open it for a purpose, then answer it with a passkey,
// or prove with the password when the person has none. Each returns the proof's id, which the action that does the
// thing consumes.

export const beginStepUpAction = authedAction(
  z.strictObject({ purpose: StepUpPurposeSchema }),
  EVERY_ROLE,
  async (input, user, session) => ({ ok: true, data: await beginStepUp(user, session.id, input.purpose) }),
);

const AssertionSchema = z.looseObject({
  id: PasskeyIdSchema,
  rawId: z.string().max(1000),
  type: z.literal("public-key"),
  response: z.looseObject({}),
});

export const passkeyStepUpAction = authedAction(
  z.strictObject({ proofId: ProofIdSchema, response: AssertionSchema }),
  EVERY_ROLE,
  async (input, user, session) => {
    const response = input.response as unknown as AuthenticationResponseJSON;
    if (!(await proveWithPasskey(user, session.id, input.proofId, response))) {
      return { ok: false, code: "step-up.refused", message: "The passkey could not confirm it is you. Try again." };
    }
    return { ok: true, data: { proofId: input.proofId } };
  },
);

/** What a refused password proof answers, by why it was refused (a throttled one also says when to try again). */
const PASSWORD_REFUSED: Record<
  Exclude<PasswordProof["kind"], "ok" | "throttled">,
  { code: string; message: string }
> = {
  "use-passkey": { code: "step-up.use-passkey", message: "You have a passkey: confirm with it instead." },
  wrong: { code: "step-up.refused", message: "That password is not right." },
  "sso-required": {
    code: "step-up.sso-required",
    message:
      "Your organization signs you in through single sign-on, so your password cannot confirm this. Add a passkey under Settings, then confirm with it.",
  },
  "sso-sign-in-again": {
    code: "step-up.sso-sign-in-again",
    message:
      "To add your first passkey, sign out and sign in again through single sign-on, then add it within 10 minutes.",
  },
};

export const passwordStepUpAction = authedAction(
  z.strictObject({ purpose: StepUpPurposeSchema, password: z.string().min(1).max(200) }),
  EVERY_ROLE,
  async (input, user, session) => {
    const proved = await proveWithPassword(user, session.id, input.purpose, input.password);
    if (proved.kind === "ok") return { ok: true, data: { proofId: proved.proofId } };
    if (proved.kind === "throttled") {
      return {
        ok: false,
        code: "step-up.throttled",
        message: `Too many wrong passwords. Try again in ${proved.retryAfterSeconds} seconds.`,
      };
    }
    return { ok: false, ...PASSWORD_REFUSED[proved.kind] };
  },
);
