"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authedAction } from "@/lib/auth/guards";
import { policyItem, ProofIdSchema } from "@/lib/auth/step-up/step-up";
import { heldWords, STEP_UP_REQUIRED } from "../changes/words";
import { parsePolicyForm, updatePolicy } from "./numbers";
import { SlackChannelSchema, TeamsChannelSchema } from "@/lib/chat-notices/channels";
import { connectChatChannel, disconnectChatChannel } from "./chat-notices";
import { setWebhook, WebhookSchema } from "./webhook";

const Typed = z.string().max(30);
const PolicyFormSchema = z.strictObject({
  autoLimitCents: Typed,
  sessionCapCents: Typed,
  maxAutoWrites: Typed,
  approvalTtlSeconds: Typed,
  agentDailyCeilingCents: Typed,
  tenantDailyCeilingCents: Typed,
  rateOpenPerMin: Typed,
  stepUpAboveCents: Typed,
  twoPersonAboveCents: Typed,
  expiryWarningSeconds: Typed,
  secondAdminAboveCents: Typed,
  changeDelaySeconds: Typed,
  duplicateWindowHours: Typed,
  oauthRefreshIdleDays: Typed,
  oauthRefreshMaxDays: Typed,
});

/** The form as typed (money in currency units); errors come back in words, naming each field by its label. */
export const updatePolicyAction = authedAction(
  z.strictObject({ policy: PolicyFormSchema, proofId: ProofIdSchema.optional() }),
  ["ADMIN"],
  async (input, user, session) => {
    const parsed = parsePolicyForm(input.policy);
    if (!parsed.ok) return { ok: false, code: "input.invalid", message: parsed.message };
    const holder = { userId: user.id, sessionId: session.id, proofId: input.proofId };
    const saved = await updatePolicy(user, parsed.policy, { holder, item: policyItem(input.policy) });
    if ("stepUpRequired" in saved) {
      return {
        ok: false,
        code: STEP_UP_REQUIRED,
        message: `This change loosens control (${saved.loosens.join(", ")}). Nothing was changed.`,
      };
    }
    revalidatePath("/admin/policy");
    return { ok: true, data: { ...saved, held: heldWords(saved.held) } };
  },
);

/** A URL and secret to set (with the proof made for that URL), or null to remove the webhook. */
export const setWebhookAction = authedAction(
  WebhookSchema.extend({ proofId: ProofIdSchema.optional() }).nullable(),
  ["ADMIN"],
  async (input, user, session) => {
    const holder = { userId: user.id, sessionId: session.id, proofId: input?.proofId };
    const saved = await setWebhook(user, input && { url: input.url, secret: input.secret }, holder);
    if (!saved.ok) return saved;
    revalidatePath("/admin/policy");
    return { ok: true, data: { held: heldWords(saved.held) } };
  },
);

/** Where held calls are announced in chat (docs/SPEC.md, "Slack and Teams"): connecting waits for the two-admin rule after the step-up; disconnecting applies at once. */
export const connectChatChannelAction = authedAction(
  z.discriminatedUnion("provider", [
    SlackChannelSchema.extend({ proofId: ProofIdSchema.optional() }),
    TeamsChannelSchema.extend({ proofId: ProofIdSchema.optional() }),
  ]),
  ["ADMIN"],
  async (input, user, session) => {
    const { proofId, ...channel } = input;
    const saved = await connectChatChannel(user, channel, { userId: user.id, sessionId: session.id, proofId });
    if (!saved.ok) return saved;
    revalidatePath("/admin/chat");
    return { ok: true, data: { held: heldWords(saved.held) } };
  },
);

export const disconnectChatChannelAction = authedAction(
  z.strictObject({ provider: z.enum(["slack", "teams"]) }),
  ["ADMIN"],
  async (input, user) => {
    await disconnectChatChannel(user, input.provider);
    revalidatePath("/admin/chat");
    return { ok: true, data: undefined };
  },
);
