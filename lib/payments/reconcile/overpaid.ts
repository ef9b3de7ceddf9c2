import { z } from "zod";
import { db, transaction } from "../../db";
import { appendAuditLog } from "../../audit/sql";
import { TextSchema } from "../../security/input";
import type { Supervisor } from "./investigations";
import { closeOverpaidRefund, findOverpaidRefunds } from "./sql";

// A refund released after the provider's not-found that the provider made after all, when the order had been refunded
// again beyond its total meanwhile (decision 031): the customer received more than the order's total and the books
// cannot count it. It is listed for the tenant's supervisors until one of them records, in words, what was done with
// the customer; that note goes to the audit log. Nothing about the money changes: the provider's refund stands.

export const CloseOverpaidSchema = z.strictObject({
  refundId: TextSchema(100).min(1),
  note: TextSchema(500).min(3),
});
export type CloseOverpaid = z.infer<typeof CloseOverpaidSchema>;

export type CloseOverpaidResult =
  | { ok: true; data: { refundId: string } }
  | { ok: false; code: "overpaid.forbidden" | "overpaid.not-found"; message: string };

/** The tenant's refunds paid past their order's total and not yet closed, oldest first. */
export const overpaidRefunds = (tenantId: string) => findOverpaidRefunds(db, tenantId);

export async function closeOverpaid(supervisor: Supervisor, input: CloseOverpaid): Promise<CloseOverpaidResult> {
  if (supervisor.role !== "SUPERVISOR")
    return { ok: false, code: "overpaid.forbidden", message: "Only supervisors close these." };
  return transaction(async (tx) => {
    // One answer for a refund of another tenant, one not paid past its order, and one already closed: ids cannot be
    // probed, and a second supervisor closing the same one learns it is done.
    const closed = await closeOverpaidRefund(tx, {
      refundId: input.refundId,
      tenantId: supervisor.tenantId,
      userId: supervisor.userId,
    });
    if (!closed)
      return {
        ok: false as const,
        code: "overpaid.not-found" as const,
        message: "No such refund waiting here: another supervisor may have closed it already. Nothing was changed.",
      };
    await appendAuditLog(tx, {
      tenantId: supervisor.tenantId,
      actorId: supervisor.userId,
      action: "refund.overpaid-closed",
      detail: { refundId: input.refundId, ...closed, note: input.note },
    });
    return { ok: true as const, data: { refundId: input.refundId } };
  });
}
