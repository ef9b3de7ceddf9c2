import type { Db } from "../../db";
import { scopesFor } from "../../tools/scopes";
import type { EarlierEffect, OrderFacts, ToolDefinition } from "../../tools/types";
import { pass, stop, type StageResult } from "../../outcome";
import type { RuleHold } from "./rules";
import { deleteOldAutoExposure } from "./sql";
import type { ConversationFacts, TenantPolicy } from "../types";

export type Consequence = "auto" | "approval";

/** A rolling 24-hour exposure ceiling a call would pass, in the numbers the supervisor's preview shows. */
export interface CeilingHit {
  name: "agent_daily_ceiling_cents" | "tenant_daily_ceiling_cents";
  limit_cents: number;
  used_cents: number;
  window_hours: 24;
}

/** An earlier effect on the order that a call may repeat: why the duplicate-intent guard holds it for a person. */
export interface DuplicateHit {
  rule: "possible_duplicate";
  of_call_id: string;
  amount_cents: number;
  currency: string;
  status: EarlierEffect["status"];
  at: string;
  window_hours: number;
}

/** The duplicate-intent guard's verdict, as the decision log keeps it for every call the guard looked at. */
export type DuplicateVerdict = { verdict: "clear"; window_hours: number } | ({ verdict: "held" } & DuplicateHit);

export interface PolicyDecision {
  consequence: Consequence;
  /** The duplicate-intent guard's verdict, null for a tool it does not look at. */
  duplicate: DuplicateVerdict | null;
  /** An irreversible effect the numbers let run without approval: it must fit under the ceilings (`reserveCeilings`). */
  meetsCeilings: boolean;
}

/**
 * Stage 10 of the pipeline: `checkPolicy`, then the duplicate-intent guard. An irreversible call they would let run
 * automatically is then reserved against the exposure ceilings (lib/gateway/decide/ceilings.ts), after the rules, so the
 * ceilings' locks are taken as late in the transaction as they can be.
 */
export function decidePolicy(
  tool: ToolDefinition,
  conversation: ConversationFacts,
  policy: TenantPolicy,
  order: OrderFacts,
  impactCents: number,
  recent: EarlierEffect[] | null,
): StageResult<PolicyDecision> {
  const checked = checkPolicy(tool, conversation, policy, order, impactCents);
  if (!checked.ok) return checked;
  const duplicate = checkDuplicate(conversation, policy, impactCents, recent);
  const held = checked.value === "approval" || duplicate?.verdict === "held";
  return pass({
    consequence: held ? "approval" : "auto",
    duplicate,
    meetsCeilings: !held && tool.effect === "irreversible" && impactCents > 0,
  });
}

/** A held verdict as the approval's card lists it among the reasons. */
export function heldFor({ verdict: _verdict, ...hit }: DuplicateVerdict & { verdict: "held" }): DuplicateHit {
  return hit;
}

/**
 * The duplicate-intent guard. A model that insists can propose the same refund again under a call key of its own
 * (stage 8 lets a deliberate second write through), so a call on an order that already has an effect of this tool
 * issued, unknown or in progress within the tenant's `duplicateWindowHours` is held for a person when it matches
 * one: the same amount, or any effect another conversation made. Only effects count, never what a conversation
 * proposed: a refused, withdrawn, denied or still-held proposal moved no money and cannot make room for another
 * (decision 011). Two different partial refunds one conversation made pass. It never refuses: a supervisor who
 * approves the possible duplicate pays it. `effects` are the order's earlier effects of the tool within the window,
 * as stage 7 read them; null for a tool that declares none, and then so is the verdict.
 */
export function checkDuplicate(
  conversation: ConversationFacts,
  policy: TenantPolicy,
  impactCents: number,
  effects: EarlierEffect[] | null,
): DuplicateVerdict | null {
  if (!effects) return null;
  const windowHours = policy.duplicateWindowHours;
  const match =
    effects.find((effect) => effect.amountCents === impactCents) ??
    effects.find((effect) => effect.conversationId !== conversation.id);
  if (!match) return { verdict: "clear", window_hours: windowHours };
  return {
    verdict: "held",
    rule: "possible_duplicate",
    of_call_id: match.callId,
    amount_cents: match.amountCents,
    currency: match.currency,
    status: match.status,
    at: match.at.toISOString(),
    window_hours: windowHours,
  };
}

/**
 * The agent's permission as this call read it (with the conversation, and for a write again under its lock, so
 * a revocation applies to the next call of an open conversation), the fraud hold, then the tenant's consequence
 * policy within one conversation. Approvals re-run this part only: an approved call is not automatic.
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
  | { rule: "max_auto_writes"; limit: number; writes_made: number }
  | { rule: CeilingHit["name"]; limit_cents: number; used_cents: number; amount_cents: number }
  | DuplicateHit
  | RuleHold;

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
    reasons.push({
      rule: "session_cap_cents",
      cap_cents: policy.sessionCapCents,
      spent_cents: conversation.irreversibleCents,
      amount_cents: impactCents,
    });
  }
  return reasons;
}

/** Whether the tenant's limits hold the call for a person: any reason `heldBecause` gives. */
export function needsApproval(
  tool: ToolDefinition,
  conversation: Pick<ConversationFacts, "writesMade" | "irreversibleCents">,
  policy: TenantPolicy,
  impactCents: number,
): boolean {
  return heldBecause(tool, conversation, policy, impactCents).length > 0;
}

/** Drops exposure rows past every window that could still count them (the job keeps the table to about a day). */
export async function pruneAutoExposure(client: Db): Promise<number> {
  return deleteOldAutoExposure(client);
}
