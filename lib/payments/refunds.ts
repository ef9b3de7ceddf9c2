import { canonicalJson, sha256Hex } from "../canonical";
import type { Prisma } from "../generated/prisma/client";
import { db, transaction, type Tx } from "../db";
import { lockConversation, recordLaterOutcome, recordLaterOutcomeWith } from "../gateway";
import { outcome, type Outcome } from "../outcome";
import { newId } from "../ids";
import type { RefundDecision, RefundParty } from "../tools/types";
import { logError } from "../observe/log";
import { paymentProvider, type PaymentProvider, type ProviderAnswer } from "./provider/provider";
import {
  findCallOutcome,
  findStoredRefund,
  findStoredRefundOfCall,
  insertReservedRefund,
  issueReservedOfCall,
  lockRefundRow,
  markRefundIssued,
  markRefundReleased,
  markReleasedRefundIssued,
  markRefundUnsettled,
  type LockedRefund,
  type StoredRefund,
} from "./sql";

// A refund leaves the host in two steps. (1) In the call's own transaction: reserve the amount against the
// refundable balance, record the operation as `reserved` under its host-derived key and mark the order as
// having an unsettled refund. (2) After that commits: ask the provider with the stored key, then settle from
// its answer. Anything uncertain stays `unknown` until reconciliation learns the truth.

/** Derived by the host from the decision itself, never from model output: one decision, one key. */
export function refundProviderKey(decision: RefundDecision): string {
  return `rf_${sha256Hex(canonicalJson(decision)).slice(0, 40)}`;
}

/** Step 1: the refund reserved under its key, as the statement the gateway runs with the order's move. */
export function reserveRefund(
  decision: RefundDecision,
  toolCallId: string,
  party: RefundParty,
): { refundId: string; providerKey: string; statement: Prisma.Sql } {
  const providerKey = refundProviderKey(decision);
  const refundId = newId("re");
  const statement = insertReservedRefund({
    id: refundId,
    tenantId: decision.tenantId,
    orderId: decision.orderId,
    toolCallId,
    amountCents: decision.amountCents,
    currency: decision.currency,
    reason: decision.reason,
    providerKey,
    ...party,
  });
  return { refundId, providerKey, statement };
}

const UNSETTLED = ["reserved", "unknown", "investigate"];

async function storedRefundById(refundId: string): Promise<StoredRefund> {
  const refund = await findStoredRefund(db, refundId);
  if (!refund) throw new Error(`no refund ${refundId}`);
  return refund;
}

/** How long after its commit a refund is sent without being read first (well under reconciliation's minimum age). */
export const FRESH_FOR_MS = 2_000;

/** Step 2 for one operation: the provider call with the stored key, then the settle. Safe to run twice. */
export async function completeRefund(
  refundId: string,
  provider: PaymentProvider = paymentProvider(),
): Promise<Outcome> {
  return complete(await storedRefundById(refundId), provider);
}

/** Step 2 for the operation a call reserved, right after that call committed. */
export async function completeRefundOfCall(
  callId: string,
  provider: PaymentProvider = paymentProvider(),
): Promise<Outcome> {
  const refund = await findStoredRefundOfCall(db, callId);
  if (!refund) throw new Error(`no refund reserved by call ${callId}`);
  return complete(refund, provider);
}

async function complete(refund: StoredRefund, provider: PaymentProvider): Promise<Outcome> {
  if (!isUnsettled(refund.status)) return findCallOutcome(db, refund.toolCallId);
  return settleLocated(refund, await ask(provider, refund.providerKey, refund));
}

/** The provider's answer for this key; a request that fails outright is an uncertain answer, never a refusal. */
async function ask(
  provider: PaymentProvider,
  providerKey: string,
  refund: Pick<StoredRefund, "orderId" | "amountCents" | "currency" | "reason">,
): Promise<ProviderAnswer> {
  try {
    return await provider.refund(providerKey, {
      order_id: refund.orderId,
      amount_cents: refund.amountCents,
      currency: refund.currency,
      reason: refund.reason,
    });
  } catch (error) {
    return { kind: "uncertain", reason: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Step 2 for the refund the call `callId` reserved, right after that call committed, by the process that made the
 * decision: the provider call under the key derived from the same decision (no read first), and, when the provider
 * made the refund, the settle in one statement that needs no lock of its own: it moves only a refund still reserved.
 * Any other answer, or a refund something else settled first, takes the locked path.
 */
export async function completeReservedRefund(
  { callId, decision, committedAt }: { callId: string; decision: RefundDecision; committedAt: number },
  provider: PaymentProvider = paymentProvider(),
): Promise<Outcome> {
  // Sent without reading the refund first, so only while it is surely still reserved: reconciliation leaves a refund
  // alone for its minimum age (10 s) after it was made. A process that stalled since its commit (a long pause, an
  // overloaded host) reads the refund first, as a restart would, so a refund released meanwhile is never paid.
  if (performance.now() - committedAt > FRESH_FOR_MS) return completeRefundOfCall(callId, provider);
  const answer = await ask(provider, refundProviderKey(decision), decision);
  if (answer.kind === "succeeded") {
    const result = {
      order_id: decision.orderId,
      refund_id: "",
      amount_cents: decision.amountCents,
      currency: decision.currency,
      refunded_cents: 0,
    };
    try {
      const issued = await recordLaterOutcomeWith(
        db,
        {
          callId,
          approvalId: null,
          outcome: outcome("refund.issued", { result }),
          decision: { actorId: null, latencyMs: 0 },
        },
        issueReservedOfCall(callId, answer.refundId, outcome("refund.issued", { result })),
      );
      if (issued) {
        const settled = issued.result as typeof result;
        return outcome("refund.issued", {
          result: { ...result, refund_id: settled.refund_id, refunded_cents: settled.refunded_cents },
        });
      }
    } catch (error) {
      logError("refund.settle-failed", error, { callId, answer: answer.kind });
    }
  }
  const refund = await findStoredRefundOfCall(db, callId);
  if (!refund) throw new Error(`no refund reserved by call ${callId}`);
  if (!isUnsettled(refund.status) && !(refund.status === "released" && answer.kind === "succeeded"))
    return findCallOutcome(db, refund.toolCallId);
  return settleLocated(refund, answer);
}

/** Locks, in the gateway's order, the refund's conversation and then the refund itself. */
export async function lockRefund(tx: Tx, refundId: string, conversationId: string): Promise<LockedRefund | null> {
  await lockConversation(tx, { id: conversationId });
  return lockRefundRow(tx, refundId);
}

export const isUnsettled = (status: string) => UNSETTLED.includes(status);

/** The refund's call ends with `final`, decided by `actorId` (a person) or by the provider's answer (null). */
async function settleCall(tx: Tx, refund: LockedRefund, final: Outcome, actorId: string | null): Promise<Outcome> {
  await recordLaterOutcome(tx, {
    callId: refund.toolCallId,
    approvalId: refund.approvalId,
    outcome: final,
    decision: { actorId, latencyMs: 0 },
  });
  return final;
}

/** The provider made the refund (or a supervisor says it did): the order is unblocked and the call executed. */
export async function issueLocked(
  tx: Tx,
  refund: LockedRefund,
  providerRefundId: string,
  actorId: string | null,
): Promise<Outcome> {
  const refundedCents = await markRefundIssued(tx, refund, providerRefundId, actorId);
  return settleCall(tx, refund, issuedOutcome(refund, refundedCents), actorId);
}

const issuedOutcome = (refund: LockedRefund, refundedCents: number) =>
  outcome("refund.issued", {
    result: {
      order_id: refund.orderId,
      refund_id: refund.id,
      amount_cents: refund.amountCents,
      currency: refund.currency,
      refunded_cents: refundedCents,
    },
  });

/**
 * The provider made a refund the books had released (its request reached the provider after the lookup that said it
 * had not): the books follow the provider. The refund is issued under the provider's reference, counted on the order
 * and the conversation again, and its call's outcome becomes `refund.issued`; the order's refunded total stops at its
 * total, and what the provider paid beyond that lists the refund for supervisors. While the order has another refund
 * unsettled, the reference is kept and the refund stays watched ("waiting"). The error log names each one issued.
 */
export async function issueAfterRelease(
  refundId: string,
  providerRefundId: string,
): Promise<"issued" | "waiting" | "not-released"> {
  const stored = await storedRefundById(refundId);
  return transaction(async (tx) => {
    const refund = await lockRefund(tx, refundId, stored.conversationId);
    return refund ? issueReleasedLocked(tx, refund, providerRefundId) : "not-released";
  });
}

async function issueReleasedLocked(
  tx: Tx,
  refund: LockedRefund,
  providerRefundId: string,
): Promise<"issued" | "waiting" | "not-released"> {
  if (refund.status !== "released") return "not-released";
  const issued = await markReleasedRefundIssued(tx, refund, providerRefundId);
  if (!issued) return "not-released";
  if (issued.waiting) return "waiting";
  await settleCall(tx, refund, issuedOutcome(refund, issued.refundedCents), null);
  logError("refund.made-after-release", new Error(`the provider made refund ${refund.id} after it was released`), {
    refundId: refund.id,
    providerRefundId,
    overpaidCents: issued.overpaidCents,
  });
  return "issued";
}

/**
 * The outcome of a refund released after the provider's own refusal or a supervisor's finding: it did not happen. The
 * model reads that in words (never the provider's or the supervisor's text), so it does not take it for a fault.
 */
export const notMade = () =>
  outcome("host.error", { reason: "The payment provider did not make this refund: nothing was paid." });

/**
 * Nothing was refunded: the reservation and the conversation's budget are given back, the order is unblocked, and the
 * call ends with `final`, the reason the refund did not happen. `watchUntil`, for a release after the provider's
 * not-found, keeps reconciliation looking the key up until then (`issueAfterRelease`).
 */
export async function releaseLocked(
  tx: Tx,
  refund: LockedRefund,
  reason: string,
  final: Outcome,
  actorId: string | null,
  watchUntil: Date | null,
): Promise<Outcome> {
  await markRefundReleased(tx, refund, reason, actorId, watchUntil);
  return settleCall(tx, refund, final, actorId);
}

/**
 * Applies the provider's answer exactly once: only an unsettled operation moves. `issued` clears the order's
 * flag; a definite refusal releases the reservation; anything else leaves it `unknown` and the order blocked.
 */
export async function settleRefund(refundId: string, answer: SettleAnswer): Promise<Outcome> {
  return settleLocated(await storedRefundById(refundId), answer);
}

/** `declined` is the provider's stored decline for the key, found by a lookup: final whatever came before. */
type SettleAnswer = ProviderAnswer | { kind: "declined"; reason: string } | { kind: "investigate"; reason: string };

async function settleLocated(
  { id: refundId, conversationId }: { id: string; conversationId: string },
  given: SettleAnswer,
): Promise<Outcome> {
  let answer = given;
  try {
    return await transaction(async (tx) => {
      const refund = (await lockRefund(tx, refundId, conversationId))!;
      // Released meanwhile, yet the provider made it: the books follow the provider.
      if (refund.status === "released" && answer.kind === "succeeded")
        await issueReleasedLocked(tx, refund, answer.refundId);
      if (!isUnsettled(refund.status)) return findCallOutcome(tx, refund.toolCallId);
      // A refusal counts only while no earlier attempt under this key was uncertain: that one may have acted.
      if (answer.kind === "refused" && refund.status !== "reserved")
        answer = { kind: "uncertain", reason: `${answer.reason} after an uncertain attempt` };
      if (answer.kind === "succeeded") return issueLocked(tx, refund, answer.refundId, null);
      // The provider refused: nothing happened, and the model may say so. No SPEC code names a provider refusal.
      if (answer.kind === "refused" || answer.kind === "declined")
        return releaseLocked(tx, refund, answer.reason, notMade(), null, null);
      const status = answer.kind === "investigate" || refund.status === "investigate" ? "investigate" : "unknown";
      await markRefundUnsettled(tx, refundId, status, answer.reason);
      // A settle that learned nothing new is no decision: the call keeps its outcome, nothing is logged.
      const final = outcome("refund.outcome-unknown");
      await recordLaterOutcome(tx, {
        callId: refund.toolCallId,
        approvalId: refund.approvalId,
        outcome: final,
        decision: null,
      });
      return final;
    });
  } catch (error) {
    logError("refund.settle-failed", error, { refundId, answer: answer.kind });
    return outcome("refund.outcome-unknown");
  }
}
