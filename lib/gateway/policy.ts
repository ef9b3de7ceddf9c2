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

/** Why a call needs approval, with the numbers of each limit it passes: what the supervisor's card says. */
export type HeldReason =
  | { rule: "auto_limit_cents"; limit_cents: number; amount_cents: number }
  | { rule: "session_cap_cents"; cap_cents: number; spent_cents: number; amount_cents: number }
  | { rule: "max_auto_writes"; limit: number; writes_made: number };

export function heldBecause(
  tool: ToolDefinition,
  conversation: Pick<ConversationFacts, "writesMade" | "irreversibleCents">,
  policy: TenantPolicy,
  impactCents: number,
): HeldReason[] {
  const reasons: HeldReason[] = [];
  if (tool.effect === "reversible" && conversation.writesMade >= policy.maxAutoWrites) {
    reasons.push({ rule: "max_auto_writes", limit: policy.maxAutoWrites, writes_made: conversation.writesMade });
  }
  if (tool.effect === "irreversible" && impactCents > policy.autoLimitCents) {
    reasons.push({ rule: "auto_limit_cents", limit_cents: policy.autoLimitCents, amount_cents: impactCents });
  }
  if (tool.effect === "irreversible" && conversation.irreversibleCents + impactCents > policy.sessionCapCents) {
    reasons.push({ rule: "session_cap_cents", cap_cents: policy.sessionCapCents, spent_cents: conversation.irreversibleCents, amount_cents: impactCents });
  }
  return reasons;
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
