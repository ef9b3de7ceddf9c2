import type { Db } from "../db";
import type { OrderFacts, ToolDefinition } from "../tools/types";
import { loadContext } from "./context";
import type { Outcome } from "./outcome";
import { checkPolicy } from "./policy";
import { checkState } from "./state";
import type { ConversationFacts, TenantPolicy } from "./types";

/**
 * Stages 7, 9 and 10 again, against current data, for a call a supervisor is about to approve: everything
 * except the approval requirement itself. Returns the order as it is now, or the outcome that stops it.
 */
export async function recheckForApproval(
  client: Db,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  conversation: ConversationFacts,
  policy: TenantPolicy,
): Promise<{ ok: true; order: OrderFacts } | { ok: false; outcome: Outcome; order: OrderFacts | null }> {
  const context = await loadContext(client, tool, args, conversation);
  if (!context.ok) return { ok: false, outcome: context.outcome, order: null };
  const order = context.value;
  const state = checkState(tool, args, order);
  if (!state.ok) return { ok: false, outcome: state.outcome, order };
  const allowed = checkPolicy(tool, conversation, policy, order, tool.impactCents(args));
  if (!allowed.ok) return { ok: false, outcome: allowed.outcome, order };
  return { ok: true, order };
}
