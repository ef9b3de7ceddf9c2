"use server";

import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { approveRequest, denyRequest, type DecisionResult } from "@/lib/approvals/decide";
import { passkeyStepUpOptions, proveWithPassword, proveWithPasskey } from "@/lib/approvals/step-up";
import { authedAction } from "@/lib/auth/guards";
import { IdSchema, TextSchema } from "@/lib/security/input";

const ApprovalId = IdSchema;
const Reason = TextSchema(500).min(1, "say why");

const EditSchema = z.strictObject({ tool: IdSchema, arguments: z.record(z.string().max(100), z.unknown()) });

const DecideSchema = z.discriminatedUnion("decision", [
  z.strictObject({
    decision: z.literal("approve"),
    ids: z.array(ApprovalId).min(1).max(100),
    edit: EditSchema.optional(),
  }),
  z.strictObject({ decision: z.literal("deny"), ids: z.array(ApprovalId).min(1).max(100), reason: Reason }),
]);

/** One or many requests; each is re-checked and consumed on its own, so one failure stops or undoes no other. */
export const decideApprovalsAction = authedAction(DecideSchema, ["SUPERVISOR"], async (input, user) => {
  const approver = { userId: user.id, tenantId: user.tenantId, role: user.role };
  const ids = [...new Set(input.ids)];
  if (input.decision === "approve" && input.edit && ids.length !== 1) {
    return { ok: false, code: "input.invalid", message: "Edit one request at a time." };
  }
  const results: DecisionResult[] = [];
  for (const id of ids) {
    results.push(
      input.decision === "approve"
        ? await approveRequest(approver, id, { edit: input.edit })
        : await denyRequest(approver, id, input.reason),
    );
  }
  revalidatePath("/approvals");
  return { ok: true, data: results };
});

export const passwordStepUpAction = authedAction(
  z.strictObject({ password: z.string().min(1).max(200) }),
  ["SUPERVISOR"],
  async (input, user) => {
    const proved = await proveWithPassword(user, input.password);
    if (proved.kind === "use-passkey")
      return { ok: false, code: "step-up.use-passkey", message: "You have a passkey: confirm with it instead." };
    if (proved.kind === "wrong") return { ok: false, code: "step-up.refused", message: "That password is not right." };
    if (proved.kind === "throttled") {
      return {
        ok: false,
        code: "sign-in.throttled",
        message: `Too many wrong passwords. Try again in ${proved.retryAfterSeconds} seconds.`,
      };
    }
    return { ok: true, data: undefined };
  },
);

export const passkeyStepUpOptionsAction = authedAction(z.strictObject({}), ["SUPERVISOR"], async (_input, user) => {
  const options = await passkeyStepUpOptions(user);
  if (!options)
    return { ok: false, code: "step-up.no-passkey", message: "You have no passkey; confirm with your password." };
  return { ok: true, data: options };
});

const AssertionSchema = z.looseObject({
  id: z.string().min(1).max(1000),
  rawId: z.string().max(1000),
  type: z.literal("public-key"),
  response: z.looseObject({}),
});

export const passkeyStepUpAction = authedAction(
  z.strictObject({ response: AssertionSchema }),
  ["SUPERVISOR"],
  async (input, user) => {
    if (!(await proveWithPasskey(user, input.response as unknown as AuthenticationResponseJSON))) {
      return { ok: false, code: "step-up.refused", message: "The passkey could not confirm it is you. Try again." };
    }
    return { ok: true, data: undefined };
  },
);
