import { expect } from "vitest";
import { db } from "@/lib/db";

/**
 * After reconciliation with a working provider: for every order, what the provider refunded equals what is
 * recorded as issued, equals the order's refunded total, which is at most its total; nothing is left
 * reserved or unknown, no order stays blocked, and a call says refund.issued exactly when its refund is (a
 * released one says why it did not happen: the provider's refusal, or what stopped its re-send).
 */
export async function expectRefundInvariants(
  orderIds: string[],
  providerTotals: Record<string, number>,
): Promise<void> {
  const orders = await db.order.findMany({ where: { id: { in: orderIds } } });
  const refunds = await db.refund.findMany({
    where: { orderId: { in: orderIds } },
    include: { toolCall: { select: { code: true } } },
  });
  for (const order of orders) {
    const issued = refunds
      .filter((refund) => refund.orderId === order.id && refund.status === "issued")
      .reduce((sum, refund) => sum + refund.amountCents, 0);
    expect({ order: order.id, provider: providerTotals[order.id] ?? 0, issued, refunded: order.refundedCents }).toEqual(
      {
        order: order.id,
        provider: issued,
        issued,
        refunded: issued,
      },
    );
    expect(order.refundedCents).toBeLessThanOrEqual(order.totalCents);
    expect(order.refundPending).toBe(false);
  }
  expect(refunds.filter((refund) => !["issued", "released"].includes(refund.status))).toEqual([]);
  for (const refund of refunds) {
    if (refund.status === "issued") expect(refund.toolCall.code).toBe("refund.issued");
    else expect(["refund.issued", "refund.outcome-unknown"]).not.toContain(refund.toolCall.code);
  }
}

/**
 * When some refunds are left for a person: the provider refunded at least what is issued and at most that plus
 * what is still open (reserved in the books), never past the order's total, and an order that is still blocked
 * is blocked by a refund on the supervisors' investigation list, never by one nobody sees.
 */
export async function expectBooksAndVisibleBlocks(
  orderIds: string[],
  providerTotals: Record<string, number>,
): Promise<void> {
  const orders = await db.order.findMany({ where: { id: { in: orderIds } } });
  const refunds = await db.refund.findMany({ where: { orderId: { in: orderIds } } });
  for (const order of orders) {
    const mine = refunds.filter((refund) => refund.orderId === order.id);
    const issued = mine
      .filter((refund) => refund.status === "issued")
      .reduce((sum, refund) => sum + refund.amountCents, 0);
    const open = mine.filter((refund) => !["issued", "released"].includes(refund.status));
    const reserved = issued + open.reduce((sum, refund) => sum + refund.amountCents, 0);
    expect(providerTotals[order.id] ?? 0).toBeGreaterThanOrEqual(issued);
    expect(providerTotals[order.id] ?? 0).toBeLessThanOrEqual(reserved);
    expect(order.refundedCents).toBe(reserved);
    expect(order.refundedCents).toBeLessThanOrEqual(order.totalCents);
    expect(open.map((refund) => refund.status)).toEqual(order.refundPending ? ["investigate"] : []);
  }
}
