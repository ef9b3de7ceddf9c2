import type { Tx } from "../db";
import type { Prisma } from "../generated/prisma/client";
import { notifyApprovalRequested } from "../approvals/notify";
import { newId } from "../ids";
import type { OrderFacts, ToolDefinition } from "../tools/types";
import { outcome, type Outcome } from "./outcome";
import { recordLaterOutcome } from "./record";
import type { ConversationFacts, TenantPolicy } from "./types";

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
}

export interface PendingCall {
  tool: ToolDefinition;
  args: Record<string, unknown>;
  argsHash: string;
  impactCents: number;
  order: OrderFacts;
  conversation: ConversationFacts;
  policy: TenantPolicy;
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
  };
}

/**
 * Stage 11: open a pending request bound to this exact call, or hand back the one already open for the
 * same conversation, tool and canonical arguments. Expired requests are closed first and never reused.
 */
export async function requestApproval(client: Tx, call: PendingCall): Promise<{ outcome: Outcome; approvalId: string }> {
  const now = new Date();
  const open = await client.approvalRequest.findFirst({
    where: { conversationId: call.conversation.id, toolName: call.tool.name, argsHash: call.argsHash, status: "pending" },
    select: { id: true, expiresAt: true, preview: true },
  });
  if (open && open.expiresAt > now) {
    return { outcome: pendingOutcome(open.id, open.expiresAt, open.preview), approvalId: open.id };
  }
  if (open) await expireApproval(client, open.id);

  const preview = buildPreview(call);
  const expiresAt = new Date(now.getTime() + call.policy.approvalTtlSeconds * 1000);
  const created = await client.approvalRequest.create({
    data: {
      id: newId("apr"),
      tenantId: call.conversation.tenantId,
      conversationId: call.conversation.id,
      originCallId: call.callId,
      toolName: call.tool.name,
      orderId: call.order.id,
      argsHash: call.argsHash,
      impactCents: call.impactCents,
      preview: preview as unknown as Prisma.InputJsonValue,
      status: "pending",
      requestedById: call.conversation.agentId,
      expiresAt,
    },
    select: { id: true },
  });
  await notifyApprovalRequested(client, { id: created.id, tenantId: call.conversation.tenantId, expiresAt, preview });
  return { outcome: pendingOutcome(created.id, expiresAt, preview), approvalId: created.id };
}

export function pendingOutcome(id: string, expiresAt: Date, preview: unknown): Outcome {
  return outcome("approval.required", { approval: { id, expires_at: expiresAt.toISOString(), preview } });
}

/** Closes a pending request past its expiry; every call waiting on it becomes approval.expired. */
export async function expireApproval(client: Tx, approvalId: string): Promise<boolean> {
  const now = new Date();
  const closed = await client.approvalRequest.updateMany({
    where: { id: approvalId, status: "pending", expiresAt: { lte: now } },
    data: { status: "expired", resultCode: "approval.expired", decidedAt: now },
  });
  if (closed.count === 0) return false;
  await recordLaterOutcome(client, { callId: null, approvalId, outcome: outcome("approval.expired"), decision: { actorId: null, latencyMs: 0 } });
  return true;
}
