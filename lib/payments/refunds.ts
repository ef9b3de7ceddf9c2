import { canonicalJson, sha256Hex } from "../canonical";
import { db, sql, transaction, type Sql } from "../db";
import { Prisma } from "../generated/prisma/client";
import { lockConversation } from "../gateway/lock";
import { outcome, type Outcome } from "../gateway/outcome";
import { recordLaterOutcome } from "../gateway/record";
import { newId } from "../ids";
import { logError } from "../log";
import { paymentProvider, type PaymentProvider, type ProviderAnswer } from "./provider";

// A refund leaves the host in two steps. (1) In the call's own transaction: reserve the amount against the
// refundable balance, record the operation as `reserved` under its host-derived key and mark the order as
// having an unsettled refund. (2) After that commits: ask the provider with the stored key, then settle from
// its answer. Anything uncertain stays `unknown` until reconciliation learns the truth.

export interface RefundDecision {
  tenantId: string;
  orderId: string;
  orderVersion: number;
  amountCents: number;
  currency: string;
  reason: string;
}

/** Derived by the host from the decision itself, never from model output: one decision, one key. */
export function refundProviderKey(decision: RefundDecision): string {
  return `rf_${sha256Hex(canonicalJson(decision)).slice(0, 40)}`;
}

export async function reserveRefund(tx: Sql, decision: RefundDecision, toolCallId: string): Promise<{ refundId: string; providerKey: string }> {
  const providerKey = refundProviderKey(decision);
  const refundId = newId("re");
  await tx.$executeRaw`
    INSERT INTO "Refund" ("id", "tenantId", "orderId", "toolCallId", "amountCents", "currency", "reason", "status", "providerKey")
    VALUES (${refundId}, ${decision.tenantId}, ${decision.orderId}, ${toolCallId}, ${decision.amountCents}, ${decision.currency}, ${decision.reason}, 'reserved', ${providerKey})`;
  return { refundId, providerKey };
}

const UNSETTLED = ["reserved", "unknown", "investigate"];

interface StoredRefund {
  id: string;
  status: string;
  providerKey: string;
  orderId: string;
  amountCents: number;
  currency: string;
  reason: string;
  toolCallId: string;
  conversationId: string;
}

async function storedRefund(where: Prisma.Sql): Promise<StoredRefund | undefined> {
  const [refund] = await sql.$queryRaw<StoredRefund[]>`
    SELECT r."id", r."status", r."providerKey", r."orderId", r."amountCents", r."currency", r."reason", r."toolCallId", c."conversationId"
    FROM "Refund" r JOIN "ToolCall" c ON c."id" = r."toolCallId" WHERE ${where}`;
  return refund;
}

async function storedRefundById(refundId: string): Promise<StoredRefund> {
  const refund = await storedRefund(Prisma.sql`r."id" = ${refundId}`);
  if (!refund) throw new Error(`no refund ${refundId}`);
  return refund;
}

/** Step 2 for one operation: the provider call with the stored key, then the settle. Safe to run twice. */
export async function completeRefund(refundId: string, provider: PaymentProvider = paymentProvider()): Promise<Outcome> {
  return complete(await storedRefundById(refundId), provider);
}

/** Step 2 for the operation a call reserved, right after that call committed. */
export async function completeRefundOfCall(callId: string, provider: PaymentProvider = paymentProvider()): Promise<Outcome> {
  const refund = await storedRefund(Prisma.sql`r."toolCallId" = ${callId}`);
  if (!refund) throw new Error(`no refund reserved by call ${callId}`);
  return complete(refund, provider);
}

async function complete(refund: StoredRefund, provider: PaymentProvider): Promise<Outcome> {
  if (!UNSETTLED.includes(refund.status)) return currentOutcome(sql, refund.toolCallId);
  let answer: ProviderAnswer;
  try {
    answer = await provider.refund(refund.providerKey, {
      order_id: refund.orderId,
      amount_cents: refund.amountCents,
      currency: refund.currency,
      reason: refund.reason,
    });
  } catch (error) {
    answer = { kind: "uncertain", reason: error instanceof Error ? error.message : String(error) };
  }
  return settleLocated(refund, answer);
}

async function currentOutcome(client: Sql, callId: string): Promise<Outcome> {
  const [call] = await client.$queryRaw<{ outcome: Outcome }[]>`SELECT "outcome" FROM "ToolCall" WHERE "id" = ${callId}`;
  return call.outcome;
}

interface LockedRefund {
  id: string;
  status: string;
  orderId: string;
  amountCents: number;
  currency: string;
  toolCallId: string;
  tenantId: string;
  approvalId: string | null;
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

async function settleLocated({ id: refundId, conversationId }: { id: string; conversationId: string }, given: SettleAnswer): Promise<Outcome> {
  let answer = given;
  try {
    return await transaction(async (tx) => {
      await lockConversation(tx, { id: conversationId });
      const [refund] = await tx.$queryRaw<LockedRefund[]>`
        SELECT r."id", r."status", r."orderId", r."amountCents", r."currency", r."toolCallId", r."tenantId", c."approvalId"
        FROM "Refund" r JOIN "ToolCall" c ON c."id" = r."toolCallId" WHERE r."id" = ${refundId} FOR UPDATE OF r`;
      if (!UNSETTLED.includes(refund.status)) return currentOutcome(tx, refund.toolCallId);
      // A refusal counts only while no earlier attempt under this key was uncertain: that one may have acted.
      if (answer.kind === "refused" && refund.status !== "reserved") answer = { kind: "uncertain", reason: `${answer.reason} after an uncertain attempt` };
      let final: Outcome;
      if (answer.kind === "succeeded") {
        const [order] = await tx.$queryRaw<{ refundedCents: number }[]>`
          WITH settled AS (
            UPDATE "Refund" SET "status" = 'issued', "providerRefundId" = ${answer.refundId}, "settledAt" = now(), "updatedAt" = now(), "attempts" = "attempts" + 1
            WHERE "id" = ${refundId}
          )
          UPDATE "Order" SET "refundPending" = false, "version" = "version" + 1, "updatedAt" = now() WHERE "id" = ${refund.orderId}
          RETURNING "refundedCents"`;
        final = outcome("refund.issued", {
          result: { order_id: refund.orderId, refund_id: refund.id, amount_cents: refund.amountCents, currency: refund.currency, refunded_cents: order.refundedCents },
        });
      } else if (answer.kind === "refused" || answer.kind === "declined") {
        await tx.$executeRaw`
          WITH released AS (
            UPDATE "Refund" SET "status" = 'released', "lastError" = ${answer.reason}, "settledAt" = now(), "updatedAt" = now(), "attempts" = "attempts" + 1
            WHERE "id" = ${refundId}
          ), budget AS (
            UPDATE "Conversation" SET "irreversibleCents" = GREATEST(0, "irreversibleCents" - ${refund.amountCents}::int) WHERE "id" = ${conversationId}
          )
          UPDATE "Order" SET "refundedCents" = "refundedCents" - ${refund.amountCents}::int, "refundPending" = false, "version" = "version" + 1, "updatedAt" = now()
          WHERE "id" = ${refund.orderId}`;
        // The provider refused: nothing happened, and the model may say so. No SPEC code names a provider refusal.
        final = outcome("host.error");
      } else {
        const status = answer.kind === "investigate" || refund.status === "investigate" ? "investigate" : "unknown";
        await tx.$executeRaw`
          UPDATE "Refund" SET "status" = ${status}, "lastError" = ${answer.reason}, "updatedAt" = now(), "attempts" = "attempts" + 1 WHERE "id" = ${refundId}`;
        final = outcome("refund.outcome-unknown");
      }
      const settled = answer.kind !== "uncertain" && answer.kind !== "investigate";
      await recordLaterOutcome(tx, {
        callId: refund.toolCallId,
        approvalId: refund.approvalId,
        outcome: final,
        decision: settled ? { actorId: null, latencyMs: 0 } : null,
      });
      return final;
    });
  } catch (error) {
    logError("refund.settle-failed", error, { refundId, answer: answer.kind });
    return outcome("refund.outcome-unknown");
  }
}

export interface ReconcileOptions {
  provider?: PaymentProvider;
  /** Leave operations younger than this alone: their own request may still be settling them. */
  minAgeMs?: number;
  /** Operations still unsettled this long after they were reserved go to the investigation list. */
  investigateAfterMs?: number;
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
}

/**
 * Looks each unsettled operation up by its key at the provider and settles it. An operation the provider
 * never saw is sent again under the same key (the decision was made; the key makes the resend safe).
 */
export async function reconcileRefunds(options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const provider = options.provider ?? paymentProvider();
  const now = options.now ?? new Date();
  const minAgeMs = options.minAgeMs ?? 10_000;
  const investigateAfterMs = options.investigateAfterMs ?? Number(process.env.RECONCILE_INVESTIGATE_AFTER_MS ?? 30 * 60_000);
  const due = await db.refund.findMany({
    where: { status: { in: UNSETTLED }, updatedAt: { lte: new Date(now.getTime() - minAgeMs) }, ...(options.tenantId ? { tenantId: options.tenantId } : {}) },
    orderBy: { createdAt: "asc" },
    take: 500,
    select: { id: true, providerKey: true, createdAt: true },
  });
  const report: ReconcileReport = { examined: due.length, issued: 0, released: 0, stillUnknown: 0, investigate: 0 };
  for (const refund of due) {
    const found = await provider.lookup(refund.providerKey);
    let settled: Outcome;
    if (found.kind === "found") settled = await settleRefund(refund.id, { kind: "succeeded", refundId: found.refundId });
    else if (found.kind === "declined") settled = await settleRefund(refund.id, found);
    else if (found.kind === "not-found") settled = await completeRefund(refund.id, provider);
    else settled = outcome("refund.outcome-unknown");

    if (settled.code === "refund.issued") report.issued++;
    else if (settled.code === "host.error") report.released++;
    else if (now.getTime() - refund.createdAt.getTime() >= investigateAfterMs) {
      await settleRefund(refund.id, { kind: "investigate", reason: "not settled within the reconciliation window" });
      report.investigate++;
    } else report.stillUnknown++;
  }
  return report;
}

/** The operations a person has to look at: unsettled past the window, their orders still blocked. */
export async function refundsToInvestigate(tenantId: string) {
  return db.refund.findMany({
    where: { tenantId, status: "investigate" },
    orderBy: { createdAt: "asc" },
    select: { id: true, orderId: true, amountCents: true, currency: true, providerKey: true, lastError: true, attempts: true, createdAt: true, toolCallId: true },
  });
}
