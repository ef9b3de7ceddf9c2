import { z } from "zod";
import { modelProjection, outcome, type Outcome } from "../gateway/outcome";
import { defineCallsTool } from "./types";

const GetCallStatusSchema = z.strictObject({
  call_id: z
    .string()
    .regex(/^call_[A-Za-z0-9_-]{1,64}$/)
    .describe("The call_id an earlier tool call of this conversation came back with"),
});

/** The later outcome of a held call, as the model may see it: the projection with the call's id (and expiry while held). */
function shown(callId: string, current: Outcome): Record<string, unknown> {
  return {
    call_id: callId,
    ...modelProjection(current),
    ...(current.kind === "pending_approval" && current.approval ? { expires_at: current.approval.expires_at } : {}),
  };
}

export const getCallStatus = defineCallsTool<z.infer<typeof GetCallStatusSchema>>({
  name: "get_call_status",
  description:
    "Look up the current outcome of an earlier tool call of this conversation by its call_id, for example a refund that waits for a supervisor: needs_approval while it waits, then ok, not_allowed (with the supervisor's reason) or unavailable; pending_confirmation means the payment provider has not confirmed a refund yet: it may have happened, so never propose it again, look later.",
  schema: GetCallStatusSchema,
  effect: "read",
  async readCalls({ client, args, conversationId }) {
    const [call] = await client.$queryRaw<{ id: string; outcome: Outcome; lapsed: boolean }[]>`
      SELECT c."id", c."outcome", (a."status" = 'pending' AND a."expiresAt" <= now()) IS TRUE AS "lapsed"
      FROM "ToolCall" c LEFT JOIN "ApprovalRequest" a ON a."id" = c."approvalId"
      WHERE c."id" = ${args.call_id} AND c."conversationId" = ${conversationId}`;
    if (!call) return outcome("call.not-found");
    // A request past its expiry can never execute; the expiry job records it, a read only says so.
    const current =
      call.lapsed && call.outcome.kind === "pending_approval" ? outcome("approval.expired") : call.outcome;
    return outcome("call.read", { result: shown(call.id, current) });
  },
});
