"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { approveRequest, denyRequest, type DecisionResult } from "@/lib/approvals/decide";
import { authedAction } from "@/lib/auth/guards";
import { IdSchema, TextSchema } from "@/lib/security/input";

const Note = TextSchema(500).optional();

const DecideSchema = z.strictObject({ ids: z.array(IdSchema).min(1).max(100), decision: z.enum(["approve", "deny"]), note: Note });

/** One or many requests; each is re-checked and consumed on its own, so one failure stops or undoes no other. */
export const decideApprovalsAction = authedAction(DecideSchema, ["SUPERVISOR"], async (input, user) => {
  const approver = { userId: user.id, tenantId: user.tenantId, role: user.role };
  const results: DecisionResult[] = [];
  for (const id of [...new Set(input.ids)]) {
    results.push(input.decision === "approve" ? await approveRequest(approver, id) : await denyRequest(approver, id, input.note || null));
  }
  revalidatePath("/approvals");
  return { ok: true, data: results };
});
