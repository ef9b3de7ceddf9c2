import type { Db } from "../../db";
import type { OrderFacts, ToolDefinition, ToolPorts } from "../../tools/types";
import { loadCallFacts } from "../context/facts";
import type { Code, Outcome } from "../../outcome";
import { checkDuplicate, checkPolicy, type DuplicateVerdict } from "./policy";
import { checkRules, rulesStop } from "./rules";
import { checkState } from "../context/state";
import type { ConversationFacts, TenantPolicy } from "../types";

/**
 * Stages 7, 9 and 10 again, against current data, for a call a supervisor is about to approve: everything
 * except the approval requirement itself, the tenant's live rules included. Returns the order as it is now, or the
 * outcome that stops it. The duplicate-intent guard runs again too, but only to report: a possible duplicate is a
 * reason to ask a person, and a person is deciding; the caller checks that the request showed them the earlier call
 * it matches.
 */
export async function recheckForApproval(
  client: Db,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  conversation: ConversationFacts,
  policy: TenantPolicy,
  ports: ToolPorts,
): Promise<
  | { ok: true; order: OrderFacts; duplicate: DuplicateVerdict | null }
  | { ok: false; outcome: Outcome; order: OrderFacts | null }
> {
  const context = await loadCallFacts(client, tool, args, conversation, { callKey: null, policy, ports });
  if (!context.ok) return { ok: false, outcome: context.outcome, order: null };
  const { order, recent, ruleFacts } = context.value;
  const state = checkState(tool, args, order);
  if (!state.ok) return { ok: false, outcome: state.outcome, order };
  const impactCents = tool.impactCents(args);
  const allowed = checkPolicy(tool, conversation, policy, order, impactCents);
  if (!allowed.ok) return { ok: false, outcome: allowed.outcome, order };
  // A rule that denies now, or rules that cannot decide, stop the approval; a rule that holds is what a person decides.
  const stopped = rulesStop(await checkRules(client, tool, conversation, policy, order, impactCents, ruleFacts, args));
  if (stopped) return { ok: false, outcome: stopped, order };
  const duplicate = checkDuplicate(conversation, policy, impactCents, recent);
  return { ok: true, order, duplicate };
}

/**
 * Stages 7, 9 and 10's permission and fraud checks again, for a reserved effect payments is about to send once more
 * (decision 006): the order as it would be without this reservation, since the re-send is this effect, not another
 * one. The money limits are not judged again (the call passed them or a person approved it). Returns the code that
 * stops it, or null.
 */
export async function recheckForResend(
  client: Db,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  found: { conversation: ConversationFacts; policy: TenantPolicy },
  reservedCents: number,
): Promise<Code | null> {
  const context = await loadCallFacts(client, tool, args, found.conversation, null);
  if (!context.ok) return context.outcome.code;
  const order = {
    ...context.value.order,
    refundedCents: context.value.order.refundedCents - reservedCents,
    refundPending: false,
  };
  const state = checkState(tool, args, order);
  if (!state.ok) return state.outcome.code;
  const allowed = checkPolicy(tool, found.conversation, found.policy, order, reservedCents);
  return allowed.ok ? null : allowed.outcome.code;
}
