import { z } from "zod";
import { db, transaction } from "../../db";
import { appendAuditLog } from "../../audit/sql";
import { consumeStepUpFor, ProofIdSchema } from "../../auth/step-up/step-up";
import { TextSchema } from "../../security/input";
import type { Supervisor } from "./investigations";
import { closeOverpaidRefund, findOverpaidRefunds, lockOpenOverpaidRefund } from "./sql";

// A refund released after the provider's not-found that the provider made after all, when the order had been refunded
// again beyond its total meanwhile (decision 031): the customer received more than the order's total and the books
// cannot count it. It is listed for the tenant's supervisors until one of them records, in words, what was done with
// the customer; that note goes to the audit log. Nothing about the money changes: the provider's refund stands.

export const CloseOverpaidSchema = z.strictObject({
  refundId: TextSchema(100).min(1),
  note: TextSchema(500).min(3),
  /** The supervisor's step-up proof for closing this refund, made in this session (decision 014). */
  proofId: ProofIdSchema.optional(),
});
export type CloseOverpaid = z.infer<typeof CloseOverpaidSchema>;

export type CloseOverpaidResult =
  | { ok: true; data: { refundId: string } }
  | { ok: false; code: "overpaid.forbidden" | "overpaid.not-found" | "overpaid.step-up-required"; message: string };

/** The tenant's refunds paid past their order's total and not yet closed, oldest first. */
export const overpaidRefunds = (tenantId: string) => findOverpaidRefunds(db, tenantId);

/**
 * Closing takes the supervisor's step-up for this refund: it clears the listing and the alert on it
 * (`toolgate_refunds_overpaid_open`), which a stolen session alone must not do quietly.
 */
export async function closeOverpaid(supervisor: Supervisor, input: CloseOverpaid): Promise<CloseOverpaidResult> {
  if (supervisor.role !== "SUPERVISOR")
    return { ok: false, code: "overpaid.forbidden", message: "Only supervisors close these." };
  return transaction(async (tx) => {
    // One answer for a refund of another tenant, one not paid past its order, and one already closed: ids cannot be
    // probed, and a second supervisor closing the same one learns it is done. No proof is spent on any of them.
    const open = await lockOpenOverpaidRefund(tx, { refundId: input.refundId, tenantId: supervisor.tenantId });
    if (!open)
      return {
        ok: false as const,
        code: "overpaid.not-found" as const,
        message: "No such refund waiting here: another supervisor may have closed it already. Nothing was changed.",
      };
    const stepUp = await consumeStepUpFor(
      tx,
      { userId: supervisor.userId, sessionId: supervisor.sessionId ?? null, proofId: input.proofId },
      { kind: "overpaid.close", refundId: input.refundId },
    );
    if (!stepUp)
      return {
        ok: false as const,
        code: "overpaid.step-up-required" as const,
        message: "Closing this needs you to confirm it is you (passkey or password) first; nothing was changed.",
      };
    await closeOverpaidRefund(tx, { refundId: input.refundId, userId: supervisor.userId });
    await appendAuditLog(tx, {
      tenantId: supervisor.tenantId,
      actorId: supervisor.userId,
      action: "refund.overpaid-closed",
      detail: { refundId: input.refundId, ...open, note: input.note, stepUp },
    });
    return { ok: true as const, data: { refundId: input.refundId } };
  });
}
