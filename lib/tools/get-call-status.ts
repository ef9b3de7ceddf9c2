import { z } from "zod";
import { isFinal, modelProjection, outcome, outcomeAsRead, waitingOn, type Outcome } from "../outcome";
import { findConversationCall } from "./sql";
import { defineCallsTool } from "./types";

/** Below the usual 60-second request timeout of MCP clients, so a waiting call never looks like a dead server. */
export const MAX_STATUS_WAIT_SECONDS = 30;

const GetCallStatusSchema = z.strictObject({
  call_id: z
    .string()
    .regex(/^call_[A-Za-z0-9_-]{1,64}$/)
    .describe("The call_id an earlier tool call of this conversation came back with"),
  wait_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_STATUS_WAIT_SECONDS)
    // Required and nullable in the model's schema (OpenAI's strict mode wants every property), absent means null.
    .nullable()
    .default(null)
    .describe(
      `Wait up to this many seconds (at most ${MAX_STATUS_WAIT_SECONDS}) for a call that still waits to be decided; the answer comes the moment it is, so there is no need to ask again and again`,
    ),
});

/** How long a client that polls (rather than waits) should leave between reads of a call that is not final. */
export const POLL_AFTER_SECONDS = 5;

/** The async-approval draft's (SEP-2848) reading of a call: one of its five dispositions. */
export type Disposition =
  "pending-approval" | "approved-executed" | "denied-not-executed" | "execution-error" | "expired";

export function dispositionOf(current: Outcome): Disposition {
  if (current.kind === "pending_approval") return "pending-approval";
  if (current.kind === "executed") return "approved-executed";
  if (current.code === "approval.expired") return "expired";
  // A refund the provider has not confirmed may have happened: an error of execution, read again later.
  if (current.kind === "unavailable") return "execution-error";
  return "denied-not-executed";
}

/**
 * The later outcome of a held call, as the model may see it: the projection with the call's id (and expiry while
 * held), plus its SEP-2848 disposition and, while it is not final, when to look again.
 */
function shown(callId: string, current: Outcome): Record<string, unknown> {
  return {
    call_id: callId,
    ...modelProjection(current),
    ...waitingOn(callId, current),
    disposition: dispositionOf(current),
    ...(isFinal(current) ? {} : { poll_after_seconds: POLL_AFTER_SECONDS }),
  };
}

export const getCallStatus = defineCallsTool<z.infer<typeof GetCallStatusSchema>>({
  name: "get_call_status",
  description:
    "Look up the current outcome of an earlier tool call of this conversation by its call_id, for example a refund that waits for a supervisor: needs_approval while it waits, then ok, not_allowed (with the supervisor's reason) or unavailable; pending_confirmation means the payment provider has not confirmed a refund yet: it may have happened, so never propose it again, look later. With wait_seconds it answers as soon as the call is decided.",
  schema: GetCallStatusSchema,
  effect: "read",
  async readCalls({ client, args, conversationId, callable, waitForChange }) {
    const look = async () => {
      const call = await findConversationCall(client, args.call_id, conversationId, callable);
      if (!call) return { done: true, value: outcome("call.not-found") };
      // A request past its expiry can never execute; the expiry job records it, a read only says so.
      const current = outcomeAsRead(call.outcome, call.lapsed);
      return {
        done: isFinal(current),
        value: outcome("call.read", { result: shown(call.id, current) }),
        wakeAt: call.lapsesAt,
      };
    };
    const seconds = args.wait_seconds ?? 0;
    if (seconds === 0 || !waitForChange) return (await look()).value;
    return waitForChange(conversationId, seconds, look);
  },
});
