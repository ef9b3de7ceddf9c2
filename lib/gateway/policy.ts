import { scopesFor } from "../tools/scopes";
import type { OrderFacts, ToolDefinition } from "../tools/types";
import { pass, stop, type StageResult } from "./outcome";
import type { ConversationFacts, TenantPolicy } from "./types";

export type Consequence = "auto" | "approval";

/**
 * Stage 10: the agent's permission as this call read it (with the conversation, and for a write again under
 * its lock, so a revocation applies to the next call of an open conversation), the fraud hold, then the
 * tenant's consequence policy.
 */
export function checkPolicy(
  tool: ToolDefinition,
  conversation: ConversationFacts,
  policy: TenantPolicy,
  order: OrderFacts,
  impactCents: number,
): StageResult<Consequence> {
  const { agent } = conversation;
  if (!agent || !scopesFor(agent).includes(tool.scope)) return stop("agent.not-authorized");
  if (tool.effect !== "read" && order.fraudHold) return stop("order.fraud-hold");
  return pass(needsApproval(tool, conversation, policy, impactCents) ? "approval" : "auto");
}

export function needsApproval(
  tool: ToolDefinition,
  conversation: Pick<ConversationFacts, "writesMade" | "irreversibleCents">,
  policy: TenantPolicy,
  impactCents: number,
): boolean {
  switch (tool.effect) {
    case "read":
      return false;
    case "reversible":
      return conversation.writesMade >= policy.maxAutoWrites;
    case "irreversible":
      return impactCents > policy.autoLimitCents || conversation.irreversibleCents + impactCents > policy.sessionCapCents;
  }
}
