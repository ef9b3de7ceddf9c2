import type { Db } from "../../db";
import { newId } from "../../ids";
import type { OrderFacts, ToolDefinition } from "../../tools/types";
import { outcome, type Outcome } from "../../outcome";
import { heldBecause, type CeilingHit, type DuplicateHit, type HeldReason } from "../decide/policy";
import { recordLaterOutcome } from "./record";
import type { RuleHold } from "../decide/rules";
import { findPendingApproval, insertApproval, markApprovalExpired, markApprovalWithdrawn } from "./sql";
import type { ConversationFacts, TenantPolicy } from "../types";

/**
 * Tells people that a request is waiting, inside the transaction that opened it, and (`expiredId`) that the expired
 * request it replaces was closed. The gateway knows no one to tell: whoever proposes the call hands it this port
 * (the approvals feature's notifier, lib/agent-api/propose.ts).
 */
export type ApprovalNotifier = (
  client: Db,
  approval: { id: string; tenantId: string; expiresAt: Date; preview: ApprovalPreview; expiredId: string | null },
) => Promise<void>;

export interface ApprovalPreview {
  tool: string;
  arguments: Record<string, unknown>;
  impact: { amount_cents: number; currency: string };
  order: {
    order_id: string;
    status: string;
    total_cents: number;
    refunded_cents: number;
    refundable_cents: number;
    currency: string;
    version: number;
  };
  conversation_id: string;
  customer_id: string;
  /** Present when the call needs approval only because it would pass a rolling 24-hour exposure ceiling. */
  ceiling?: CeilingHit;
  /** Each limit the call passes, with its numbers, as the checks saw them (a ceiling included). */
  held: HeldReason[];
}

export interface PendingCall {
  tool: ToolDefinition;
  args: Record<string, unknown>;
  argsHash: string;
  impactCents: number;
  order: OrderFacts;
  conversation: ConversationFacts;
  policy: TenantPolicy;
  ceiling: CeilingHit | null;
  /** The earlier effect the duplicate-intent guard held this call for, first among the reasons the card gives. */
  duplicate: DuplicateHit | null;
  /** The tenant's rules that hold the call (docs/decisions/019), next among the reasons. */
  ruleHolds?: RuleHold[];
  callId: string;
}

/** Built by the runtime from the normalized arguments and the order facts the checks saw, never by the model. */
export function buildPreview(call: PendingCall): ApprovalPreview {
  const { order } = call;
  return {
    tool: call.tool.name,
    arguments: call.args,
    impact: { amount_cents: call.impactCents, currency: order.currency },
    order: {
      order_id: order.id,
      status: order.status,
      total_cents: order.totalCents,
      refunded_cents: order.refundedCents,
      refundable_cents: order.totalCents - order.refundedCents,
      currency: order.currency,
      version: order.version,
    },
    conversation_id: call.conversation.id,
    customer_id: call.conversation.customerId,
    ...(call.ceiling ? { ceiling: call.ceiling } : {}),
    held: [
      ...(call.duplicate ? [call.duplicate] : []),
      ...(call.ruleHolds ?? []),
      ...heldBecause(call.tool, call.conversation, call.policy, call.impactCents),
      ...(call.ceiling
        ? [
            {
              rule: call.ceiling.name,
              limit_cents: call.ceiling.limit_cents,
              used_cents: call.ceiling.used_cents,
              amount_cents: call.impactCents,
            },
          ]
        : []),
    ],
  };
}

/**
 * Stage 11: open a pending request bound to this exact call, or hand back the one already open for the
 * same conversation, tool and canonical arguments. Expired requests are closed first and never reused.
 */
export async function requestApproval(
  client: Db,
  call: PendingCall,
  notify: ApprovalNotifier,
): Promise<{ outcome: Outcome; approvalId: string }> {
  const now = new Date();
  const open = await findPendingApproval(client, {
    conversationId: call.conversation.id,
    toolName: call.tool.name,
    argsHash: call.argsHash,
  });
  if (open && open.expiresAt > now) {
    return { outcome: pendingOutcome(open.id, open.expiresAt, open.preview), approvalId: open.id };
  }
  const expiredId = open && (await expireApproval(client, open.id)) ? open.id : null;

  const preview = buildPreview(call);
  const id = newId("apr");
  const expiresAt = new Date(now.getTime() + call.policy.approvalTtlSeconds * 1000);
  await insertApproval(client, {
    id,
    tenantId: call.conversation.tenantId,
    conversationId: call.conversation.id,
    originCallId: call.callId,
    toolName: call.tool.name,
    orderId: call.order.id,
    argsHash: call.argsHash,
    impactCents: call.impactCents,
    preview,
    requestedById: call.conversation.agentId,
    expiresAt,
  });
  await notify(client, { id, tenantId: call.conversation.tenantId, expiresAt, preview, expiredId });
  return { outcome: pendingOutcome(id, expiresAt, preview), approvalId: id };
}

export function pendingOutcome(id: string, expiresAt: Date, preview: unknown): Outcome {
  return outcome("approval.required", { approval: { id, expires_at: expiresAt.toISOString(), preview } });
}

/** Closes a pending request past its expiry; every call waiting on it becomes approval.expired. */
export async function expireApproval(client: Db, approvalId: string): Promise<boolean> {
  // The host's clock, as in every expiry check before this one (a transaction's now() is its start).
  const now = new Date().toISOString();
  if (!(await markApprovalExpired(client, approvalId, now))) return false;
  await recordLaterOutcome(client, {
    callId: null,
    approvalId,
    outcome: outcome("approval.expired"),
    decision: { actorId: null, latencyMs: 0 },
  });
  return true;
}

/**
 * Withdraws a pending, unexpired request at the requesting agent's word (an MCP client cancelling its task): it
 * closes as `withdrawn` with no decider, nothing executes, and every call waiting on it becomes approval.withdrawn,
 * logged like an expiry. The caller holds the conversation's lock. False when the request was no longer open.
 */
export async function withdrawApproval(client: Db, approvalId: string, latencyMs: number): Promise<boolean> {
  const now = new Date().toISOString();
  if (!(await markApprovalWithdrawn(client, approvalId, now))) return false;
  await recordLaterOutcome(client, {
    callId: null,
    approvalId,
    outcome: outcome("approval.withdrawn"),
    decision: { actorId: null, latencyMs },
  });
  return true;
}
