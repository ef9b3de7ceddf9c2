"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { decideFromLink } from "@/lib/approvals/email-links/decide";
import { authedAction } from "@/lib/auth/guards";
import { ProofIdSchema } from "@/lib/auth/step-up/step-up";

const DecideFromLinkSchema = z.strictObject({
  token: z.string().min(1).max(100),
  decision: z.enum(["approve", "deny"]),
  note: z.string().trim().max(500).optional(),
  proofId: ProofIdSchema.optional(),
});

/** The decision posted from an approval email's page; the link is used up by it, never by opening the page. */
export const decideFromLinkAction = authedAction(DecideFromLinkSchema, ["SUPERVISOR"], async (input, user, session) => {
  if (input.decision === "deny" && !input.note)
    return { ok: false, code: "input.invalid", message: "Give a reason for denying; the agent reads it." };
  const result = await decideFromLink(
    { userId: user.id, tenantId: user.tenantId, role: user.role, sessionId: session.id },
    input.token,
    input.decision,
    input.note || null,
    input.proofId ?? null,
  );
  revalidatePath("/approvals");
  return { ok: true, data: result };
});
