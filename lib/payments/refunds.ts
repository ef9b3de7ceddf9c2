import { newId } from "../ids";
import { sha256Hex, canonicalJson } from "../canonical";
import type { Tx } from "../db";

export interface RefundDecision {
  tenantId: string;
  orderId: string;
  orderVersion: number;
  amountCents: number;
  currency: string;
  reason: string;
}

export interface IssuedRefund {
  refundId: string;
  providerKey: string;
  status: "issued";
}

/** Where a decided refund goes. Today it is recorded locally; the payment-provider client replaces it. */
export interface RefundExecutor {
  issue(tx: Tx, decision: RefundDecision, toolCallId: string): Promise<IssuedRefund>;
}

/** Derived by the host from the decision itself, never from model output: one decision, one key. */
export function refundProviderKey(decision: RefundDecision): string {
  return `rf_${sha256Hex(canonicalJson(decision)).slice(0, 40)}`;
}

export const localRefundExecutor: RefundExecutor = {
  async issue(tx, decision, toolCallId) {
    const providerKey = refundProviderKey(decision);
    const refund = await tx.refund.create({
      data: {
        id: newId("re"),
        tenantId: decision.tenantId,
        orderId: decision.orderId,
        toolCallId,
        amountCents: decision.amountCents,
        currency: decision.currency,
        reason: decision.reason,
        status: "issued",
        providerKey,
      },
      select: { id: true },
    });
    return { refundId: refund.id, providerKey, status: "issued" };
  },
};
