"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { connectChatChannel, disconnectChatChannel } from "@/lib/admin/chat-notices";
import { heldWords } from "@/lib/admin/change-words";
import { authedAction } from "@/lib/auth/guards";
import { SlackChannelSchema, TeamsChannelSchema } from "@/lib/chat-notices/channels";

// Where held calls are announced in chat (docs/SPEC.md, "Slack and Teams"): connecting waits for the two-admin
// rule after the admin's step-up; disconnecting applies at once.

const ProofId = z.string().min(1).max(100).optional();

export const connectChatChannelAction = authedAction(
  z.discriminatedUnion("provider", [
    SlackChannelSchema.extend({ proofId: ProofId }),
    TeamsChannelSchema.extend({ proofId: ProofId }),
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
