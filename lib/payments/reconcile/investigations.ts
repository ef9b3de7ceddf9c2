import { z } from "zod";
import { db, transaction } from "../../db";
import { env } from "../../env";
import type { Outcome } from "../../outcome";
import { appendAuditLog } from "../../audit/sql";
import { consumeStepUpFor, ProofIdSchema } from "../../auth/step-up/step-up";
import { TextSchema } from "../../security/input";
import { paymentProvider, type PaymentProvider, type ProviderLookup } from "../provider/provider";
import { issueLocked, lockRefund, notMade, releaseLocked } from "../refunds";
import { findRefundToSettle } from "./sql";

// A refund under investigation waits for a person: only a supervisor of its tenant closes it, as issued (the
// provider's reference for the refund it found) or released (a note saying why nothing was refunded). The
// provider is asked first: a finding its own answer contradicts is refused. The decision is audited, the order is
// unblocked, and the agent's call takes the final outcome.

const RefundId = TextSchema(100).min(1);

export const ResolveInvestigationSchema = z.discriminatedUnion("resolution", [
  z.strictObject({
    refundId: RefundId,
    resolution: z.literal("issued"),
    providerRefundId: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_-]{3,100}$/, "the provider's refund reference: 3 to 100 letters, digits, _ or -"),
  }),
  z.strictObject({
    refundId: RefundId,
    resolution: z.literal("released"),
    note: TextSchema(500).min(3),
    /** The supervisor's step-up proof for releasing this refund, made in this session (decision 014). */
    proofId: ProofIdSchema.optional(),
  }),
]);
export type ResolveInvestigation = z.infer<typeof ResolveInvestigationSchema>;

export interface Supervisor {
  userId: string;
  tenantId: string;
  role: string;
  /** The session acting: a step-up proof counts only in the session that made it. */
  sessionId?: string | null;
}

export type ResolveResult =
  | { ok: true; data: { refundId: string; outcome: Outcome } }
  | {
      ok: false;
      code:
        | "investigation.forbidden"
        | "investigation.not-found"
        | "investigation.already-closed"
        | "investigation.step-up-required"
        | "investigation.provider-disagrees";
      message: string;
    };

/** What the provider says of the refund's key; a lookup that fails outright says nothing. */
async function lookUp(providerKey: string, provider?: PaymentProvider): Promise<ProviderLookup> {
  try {
    return await (provider ?? paymentProvider()).lookup(providerKey);
  } catch (error) {
    return { kind: "uncertain", reason: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Why the provider's own answer contradicts the supervisor's finding, or null. A refund it made is never released
 * (the order could be refunded twice) nor issued under another reference; one it declined is never issued. When it
 * cannot answer, or no longer knows the key (past its retention), the supervisor's finding stands.
 */
function contradiction(answer: ProviderLookup, input: ResolveInvestigation): string | null {
  if (answer.kind === "found" && (input.resolution === "released" || input.providerRefundId !== answer.refundId))
    return `The payment provider made this refund, as ${answer.refundId}: close it as issued with that reference; nothing was changed.`;
  if (answer.kind === "declined" && input.resolution === "issued")
    return "The payment provider declined this refund, so nothing was paid: it cannot be closed as issued; nothing was changed.";
  return null;
}

export async function resolveInvestigation(
  supervisor: Supervisor,
  input: ResolveInvestigation,
  provider?: PaymentProvider,
): Promise<ResolveResult> {
  if (supervisor.role !== "SUPERVISOR")
    return { ok: false, code: "investigation.forbidden", message: "Only supervisors close investigations." };
  // Same answer for a missing refund and another tenant's, so ids cannot be probed.
  const found = await findRefundToSettle(db, { id: input.refundId, tenantId: supervisor.tenantId });
  if (!found) return { ok: false, code: "investigation.not-found", message: "No such refund under investigation." };
  // Asked before any lock is taken or any proof spent, while it is open: a refused finding changes nothing.
  const answer = found.status === "investigate" ? await lookUp(found.providerKey, provider) : null;
  const disagreement = answer && contradiction(answer, input);
  if (disagreement) return { ok: false, code: "investigation.provider-disagrees", message: disagreement };
  return transaction(async (tx) => {
    const refund = await lockRefund(tx, input.refundId, found.conversationId);
    if (!refund || refund.status !== "investigate") {
      return {
        ok: false as const,
        code: "investigation.already-closed" as const,
        message: `This refund is already ${refund?.status ?? "gone"}; nothing was changed.`,
      };
    }
    // Releasing frees the order for another refund: money can move again, so it consumes the supervisor's proof
    // for this refund in this transaction. Closing as issued only records what the provider already did.
    const stepUp =
      input.resolution === "released"
        ? await consumeStepUpFor(
            tx,
            { userId: supervisor.userId, sessionId: supervisor.sessionId ?? null, proofId: input.proofId },
            { kind: "investigation.release", refundId: refund.id },
          )
        : null;
    if (input.resolution === "released" && !stepUp) {
      return {
        ok: false as const,
        code: "investigation.step-up-required" as const,
        message: "Releasing a refund needs you to confirm it is you (passkey or password) first; nothing was changed.",
      };
    }
    const final =
      input.resolution === "issued"
        ? await issueLocked(tx, refund, input.providerRefundId, supervisor.userId)
        : await releaseLocked(
            tx,
            refund,
            `released by a supervisor: ${input.note}`,
            notMade(),
            supervisor.userId,
            // The provider did not know the key when asked, or could not say: watched while it still keeps keys, in
            // case the request reached it late. Only its own decline is final.
            answer?.kind === "not-found" || answer?.kind === "uncertain"
              ? new Date(refund.createdAt.getTime() + env().RECONCILE_RESEND_WINDOW_MS)
              : null,
          );
    const detail = {
      refundId: input.refundId,
      resolution: input.resolution,
      ...(input.resolution === "issued" ? { providerRefundId: input.providerRefundId } : { note: input.note }),
      orderId: refund.orderId,
      amountCents: refund.amountCents,
      currency: refund.currency,
      provider: answer?.kind,
      ...(stepUp ? { stepUp } : {}),
    };
    await appendAuditLog(tx, {
      tenantId: supervisor.tenantId,
      actorId: supervisor.userId,
      action: `refund.investigation-${input.resolution}`,
      detail,
    });
    return { ok: true as const, data: { refundId: refund.id, outcome: final } };
  });
}
