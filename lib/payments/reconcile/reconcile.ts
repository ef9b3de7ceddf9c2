import { loadConversation } from "../../conversations/lookup";
import { db, transaction, type Tx } from "../../db";
import { outcome, type Code, type Outcome } from "../../outcome";
import { recheckForResend } from "../../gateway";
import { logError } from "../../observe/log";
import { issueRefund } from "../../tools/issue-refund";
import { paymentProvider, type PaymentProvider, type ProviderLookup, type ProviderProbe } from "../provider/provider";
import { completeRefund, issueAfterRelease, isUnsettled, lockRefund, releaseLocked, settleRefund } from "../refunds";
import {
  claimNextRefund,
  deferRefundCheck,
  findExecutedArgs,
  findProviderStatus,
  findRefundToSettle,
  findRefundsToInvestigate,
  isApprovalValid,
  markRefundResent,
  upsertProviderStatus,
  type ClaimedRefund,
} from "./sql";
import { endRefundWatch, hasLateRefundWaiting, type LockedRefund } from "../sql";
import { env } from "../../env";

// Reconciliation learns what the provider did with each unsettled refund, by its key. It never takes a "no" from
// anything but the provider itself: a pass first proves it reaches the provider, "never seen" is only the
// provider's signed not-found, and a refund the provider never saw is re-sent only within the provider's key
// retention and only if the gateway would still allow it now. A refund released after the provider's not-found is
// looked up again until the provider forgets its key: its request may still have been on its way, and if the
// provider made it after all, the books follow the provider.

export interface ReconcileOptions {
  provider?: PaymentProvider;
  /** Leave operations younger than this alone: their own request may still be settling them. */
  minAgeMs?: number;
  /** Operations still unsettled this long after they were reserved go to the investigation list. */
  investigateAfterMs?: number;
  /** The provider's key retention, less a margin: past it a re-send could be a second refund, so none is made. */
  resendWindowMs?: number;
  /** After a check that settled nothing, the refund is left alone this long, doubling per check up to 32 times. */
  backoffMs?: number;
  /** How long a claimed refund is left to its reconciler before another may take it over. */
  leaseMs?: number;
  /** The most refunds one pass examines. */
  limit?: number;
  now?: Date;
  /** Only this tenant's operations (one worker per tenant, or a test that owns its rows). */
  tenantId?: string;
}

export interface ReconcileReport {
  examined: number;
  issued: number;
  released: number;
  stillUnknown: number;
  investigate: number;
  /** Released refunds the provider made after all (their requests arrived late). */
  madeAfterRelease: number;
  /** Why the pass did nothing: the provider could not be shown to be the one answering. */
  paused?: string;
}

const HOUR = 60 * 60_000;

/** The configured defaults: the app's periodic job and `npm run reconcile` both run with them. */
export function reconcileSettings(): Required<Pick<ReconcileOptions, "investigateAfterMs" | "resendWindowMs">> {
  return {
    investigateAfterMs: env().RECONCILE_INVESTIGATE_AFTER_MS,
    resendWindowMs: env().RECONCILE_RESEND_WINDOW_MS,
  };
}

/** Whether the last pass reached the provider, and why not: shown above the investigation list. */
export async function reconcileHealth() {
  return findProviderStatus(db);
}

/**
 * One pass: a probe, then each due refund in turn. Found at the provider: issued. Declined there: released.
 * Never seen: re-sent under its key if still within the window and still allowed, else released or investigated.
 */
export async function reconcileRefunds(options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const provider = options.provider ?? paymentProvider();
  const settings = reconcileSettings();
  const now = options.now ?? new Date();
  const investigateAfterMs = options.investigateAfterMs ?? settings.investigateAfterMs;
  const resendWindowMs = options.resendWindowMs ?? settings.resendWindowMs;
  const backoffMs = options.backoffMs ?? 0;
  const report: ReconcileReport = {
    examined: 0,
    issued: 0,
    released: 0,
    stillUnknown: 0,
    investigate: 0,
    madeAfterRelease: 0,
  };

  const probe = await provider.probe().catch((error: unknown): ProviderProbe => ({
    ok: false,
    reason: error instanceof Error ? error.message : String(error),
  }));
  await upsertProviderStatus(db, probe.ok, probe.ok ? null : probe.reason);
  if (!probe.ok) {
    logError("reconcile.paused", new Error(`the payment provider could not be reached as configured: ${probe.reason}`));
    return { ...report, paused: probe.reason };
  }

  const skip: string[] = [];
  while (report.examined < (options.limit ?? 500)) {
    // One reconciler per refund, and every refund gets its turn.
    const refund = await claimNextRefund(db, {
      tenantId: options.tenantId,
      minAgeMs: options.minAgeMs ?? 10_000,
      leaseMs: options.leaseMs ?? 60_000,
      skip,
    });
    if (!refund) break;
    skip.push(refund.id);
    report.examined++;
    // Still to be looked up after this turn: its next check waits, longer each time, so a refund the provider cannot
    // answer holds no one up.
    const nextCheckInMs = Math.min(backoffMs * 2 ** Math.min(refund.checks - 1, 32), 24 * HOUR);
    if (refund.status === "released") {
      const watched = await watch(refund, provider, now);
      if (watched === "made") report.madeAfterRelease++;
      // Waiting for its order's other refund, which keeps the order blocked: due again at the next pass, not later.
      else if (watched !== "waiting") await deferRefundCheck(db, refund.id, nextCheckInMs);
      continue;
    }
    const settled = await examine(refund, provider, now, resendWindowMs);
    if (settled === "investigate") report.investigate++;
    else if (settled.code === "refund.issued") report.issued++;
    else if (settled.code !== "refund.outcome-unknown") report.released++;
    else if (refund.status === "investigate") report.investigate++;
    else if (now.getTime() - refund.createdAt.getTime() >= investigateAfterMs) {
      await settleRefund(refund.id, { kind: "investigate", reason: "not settled within the reconciliation window" });
      report.investigate++;
    } else report.stillUnknown++;
    await deferRefundCheck(db, refund.id, nextCheckInMs);
  }
  return report;
}

async function examine(
  refund: ClaimedRefund,
  provider: PaymentProvider,
  now: Date,
  resendWindowMs: number,
): Promise<Outcome | "investigate"> {
  const found = await provider.lookup(refund.providerKey);
  if (found.kind === "found") return settleRefund(refund.id, { kind: "succeeded", refundId: found.refundId });
  if (found.kind === "declined") return settleRefund(refund.id, found);
  if (found.kind === "uncertain") return settleRefund(refund.id, found);
  // Under investigation, a person decides; nothing is sent again on its own.
  if (refund.status === "investigate") return outcome("refund.outcome-unknown");
  if (now.getTime() - refund.createdAt.getTime() >= resendWindowMs) {
    await settleRefund(refund.id, {
      kind: "investigate",
      reason: "the provider does not know the key and its retention window has passed: not re-sent",
    });
    return "investigate";
  }
  const resend = await markResend(refund.id, new Date(refund.createdAt.getTime() + resendWindowMs));
  return resend.ok ? completeRefund(refund.id, provider) : resend.outcome;
}

/**
 * A released refund still watched, looked up once more (or, when an earlier look found it while its order had another
 * refund unsettled, taken up again with what was found). Made after all: the books follow the provider. Only the
 * provider's own answer ends the watch: its decline at once, its not-found once the watch's time is up, when it no
 * longer keeps the key. A lookup it could not answer, or a failure here, leaves the refund watched for the next turn.
 */
async function watch(
  refund: ClaimedRefund,
  provider: PaymentProvider,
  now: Date,
): Promise<"made" | "waiting" | "ended" | "watching"> {
  try {
    const found: ProviderLookup = refund.providerRefundId
      ? { kind: "found", refundId: refund.providerRefundId }
      : await provider.lookup(refund.providerKey);
    if (found.kind === "found") {
      const settled = await issueAfterRelease(refund.id, found.refundId);
      return settled === "issued" ? "made" : settled === "waiting" ? "waiting" : "ended";
    }
    if (found.kind === "uncertain" || (found.kind === "not-found" && refund.watchUntil && refund.watchUntil > now))
      return "watching";
    await endRefundWatch(db, refund.id);
    return "ended";
  } catch (error) {
    logError("reconcile.watch-failed", error, { refundId: refund.id });
    return "watching";
  }
}

/**
 * Re-runs, against current data and under the same locks as a call, what the gateway checks before a refund:
 * the order's state, the agent's permission and the fraud hold, and for an approved call that its approval is
 * still valid. Passing marks the re-send in the same transaction; failing releases the reservation with the
 * reason, watched until `watchUntil`, and the call's outcome becomes that reason.
 */
async function markResend(refundId: string, watchUntil: Date): Promise<{ ok: true } | { ok: false; outcome: Outcome }> {
  const found = await findRefundToSettle(db, { id: refundId });
  if (!found) throw new Error(`no refund ${refundId}`);
  return transaction(async (tx) => {
    const refund = await lockRefund(tx, refundId, found.conversationId);
    if (!refund || !isUnsettled(refund.status))
      return { ok: false as const, outcome: outcome("refund.outcome-unknown") };
    const refusal = await recheck(tx, refund);
    if (refusal)
      return {
        ok: false as const,
        outcome: await releaseLocked(tx, refund, `not re-sent: ${refusal}`, outcome(refusal), null, watchUntil),
      };
    await markRefundResent(tx, refund.id);
    return { ok: true as const };
  });
}

async function recheck(tx: Tx, refund: LockedRefund): Promise<Code | null> {
  const found = await loadConversation(tx, refund.conversationId);
  const executed = await findExecutedArgs(tx, refund.toolCallId);
  if (!found || !executed) return "order.not-found";
  const args = JSON.parse(executed) as Record<string, unknown>;
  const refusal = await recheckForResend(tx, issueRefund, args, found, refund.amountCents);
  if (refusal) return refusal;
  // A late refund of the order, made at the provider, waits to be counted beside this one: sending this too could
  // pay the order past its total. Released instead, the late one is counted on its own.
  if (await hasLateRefundWaiting(tx, refund.orderId)) return "amount.exceeds-refundable";
  if (refund.approvalId && !(await isApprovalValid(tx, refund.approvalId))) return "approval.expired";
  return null;
}

/** The operations a person has to decide: unsettled past the window, their orders still blocked. */
export async function refundsToInvestigate(tenantId: string) {
  return findRefundsToInvestigate(db, tenantId);
}
