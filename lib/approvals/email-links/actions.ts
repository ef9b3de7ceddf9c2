"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { ApprovalEditSchema } from "@/lib/approvals/decision/binding";
import { decideFromLink } from "@/lib/approvals/email-links/decide";
import { authedAction } from "@/lib/auth/guards";
import { ProofIdSchema } from "@/lib/auth/step-up/step-up";
import { MAX_DENY_REASON } from "@/lib/approvals/words";
import { TextSchema } from "@/lib/security/input";

const DecideFromLinkSchema = z.strictObject({
  token: z.string().min(1).max(100),
  decision: z.enum(["approve", "deny"]),
  note: TextSchema(MAX_DENY_REASON).optional(),
  proofId: ProofIdSchema.optional(),
  /** A lowered amount, as the desk's dialog sends it: the same tool and arguments, `amount_cents` lower. */
  edit: ApprovalEditSchema.optional(),
});

/** The decision posted from an approval email's page; the link is used up by it, never by opening the page. */
export const decideFromLinkAction = authedAction(DecideFromLinkSchema, ["SUPERVISOR"], async (input, user, session) => {
  if (input.decision === "deny" && !input.note)
    return { ok: false, code: "input.invalid", message: "Give a reason for denying; the agent reads it." };
  if (input.decision === "deny" && input.edit)
    return { ok: false, code: "input.invalid", message: "Only an approval can lower the amount." };
  const result = await decideFromLink(
    { userId: user.id, tenantId: user.tenantId, role: user.role, sessionId: session.id },
    input.token,
    input.decision,
    input.note || null,
    { proofId: input.proofId ?? null, edit: input.edit },
  );
  revalidatePath("/approvals");
  return { ok: true, data: result };
});
