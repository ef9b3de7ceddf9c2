"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { approveRequest } from "@/lib/approvals/decision/approve";
import { ApprovalEditSchema } from "@/lib/approvals/decision/binding";
import { denyRequest } from "@/lib/approvals/decision/deny";
import type { DecisionResult } from "@/lib/approvals/decision/types";
import { authedAction } from "@/lib/auth/guards";
import { IdSchema, TextSchema } from "@/lib/security/input";
import { ProofIdSchema } from "@/lib/auth/step-up/step-up";
import { MAX_DENY_REASON } from "@/lib/approvals/words";

const ApprovalId = IdSchema;
const Reason = TextSchema(MAX_DENY_REASON).min(1, "say why");

const DecideSchema = z.discriminatedUnion("decision", [
  z.strictObject({
    decision: z.literal("approve"),
    ids: z.array(ApprovalId).min(1).max(100),
    edit: ApprovalEditSchema.optional(),
    /** The step-up proof made in this session for these requests at these amounts (decision 014). */
    proofId: ProofIdSchema.optional(),
  }),
  z.strictObject({ decision: z.literal("deny"), ids: z.array(ApprovalId).min(1).max(100), reason: Reason }),
]);

/** One or many requests; each is re-checked and consumed on its own, so one failure stops or undoes no other. */
export const decideApprovalsAction = authedAction(DecideSchema, ["SUPERVISOR"], async (input, user, session) => {
  const approver = { userId: user.id, tenantId: user.tenantId, role: user.role, sessionId: session.id };
  const ids = [...new Set(input.ids)];
  if (input.decision === "approve" && input.edit && ids.length !== 1) {
    return { ok: false, code: "input.invalid", message: "Edit one request at a time." };
  }
  const results: DecisionResult[] = [];
  for (const id of ids) {
    results.push(
      input.decision === "approve"
        ? await approveRequest(approver, id, { edit: input.edit, proofId: input.proofId })
        : await denyRequest(approver, id, input.reason),
    );
  }
  revalidatePath("/approvals");
  return { ok: true, data: results };
});
