import { db } from "../db";
import {
  findCallApproval,
  findCallDecisions,
  findCallRefunds,
  findTimelineCall,
  type ApprovalRow,
  type DecisionRow,
  type TimelineCall,
} from "./sql";
import { duplicateText, heldText } from "../approvals/words";
import { heldFor, type DuplicateVerdict } from "../gateway";
import type { RuleVerdict } from "../policy-rules/engine/evaluate";
import { outcomeTitle } from "./words";
import { amountCentsOf, formatMoney } from "../money";
import { count } from "../words";

export interface TimelineEvent {
  at: Date;
  /** What happened, in words. */
  title: string;
  /** Who did it, when a person did. */
  by: string | null;
  code: string | null;
  kind: string | null;
  detail: string | null;
  /** The earlier call a possible duplicate matched, whose timeline the event links. */
  earlierCallId?: string;
}

/** The duplicate-intent guard's verdict on a call, as its timeline says it. */
function guardText(verdict: DuplicateVerdict): string {
  if (verdict.verdict === "clear")
    return `Duplicate check: no refund of this order in the last ${verdict.window_hours} hours matches`;
  const hit = heldFor(verdict);
  return `Duplicate check: ${duplicateText(hit, hit.currency, { earlierCall: false })}`;
}

/**
 * Why the call was held, as its card says it: "Held because 80.00 USD is above the 50.00 USD limit …". A possible
 * duplicate is left to the duplicate check's own words beside it.
 */
function heldBecause(held: ApprovalRow["held"] | undefined): string | null {
  const reasons = held?.reasons.filter((reason) => reason.rule !== "possible_duplicate") ?? [];
  if (!held || reasons.length === 0) return null;
  return `Held because ${reasons.map((reason) => heldText(reason, held.currency)).join("; ")}`;
}

/** A rule set's verdict as the timeline says it: which rule held or refused the call, and why. */
function verdictText(verdict: RuleVerdict): string | null {
  switch (verdict.verdict) {
    case "allow":
      return null;
    case "failed":
      return `the rules could not decide: ${verdict.message}`;
    case "hold":
      return verdict.rules.map((rule) => `held by rule "${rule.id}": ${rule.reason}`).join("; ");
    case "deny":
      return verdict.rules.map((rule) => `refused by rule "${rule.id}" (code ${rule.code})`).join("; ");
  }
}

/** The rules' part of a decision: the live verdict, and what the shadow rules would have done when they differ. */
function rulesText(verdicts: NonNullable<DecisionRow["ruleVerdicts"]>): string | null {
  const live = verdicts.live && verdictText(verdicts.live);
  const shadow = verdicts.shadow && (verdictText(verdicts.shadow) ?? "allowed");
  const parts = [
    live && `Rules: ${live}`,
    shadow && shadow !== live && `Shadow rules: ${shadow === "allowed" ? "would allow" : `would be ${shadow}`}`,
  ];
  return parts.filter(Boolean).join(" · ") || null;
}

/** "Lowered from 80.00 USD to 60.00 USD" when the approver approved less than was proposed, else null. */
function loweredText(approval: ApprovalRow | null): string | null {
  const approved = amountCentsOf(approval?.approvedArgs);
  const currency = (approval?.approvedArgs as { currency?: unknown } | null)?.currency;
  if (!approval || approved === null || approved === approval.impactCents || typeof currency !== "string") return null;
  return `Lowered from ${formatMoney(approval.impactCents, currency)} to ${formatMoney(approved, currency)}`;
}

function decisionTitle(row: DecisionRow): string {
  if (row.actor && row.code === "approval.denied") return "Denied";
  if (row.actor) return "Approved";
  if (row.replayed) return `Replayed the stored outcome (${row.code})`;
  return outcomeTitle(row.code) ?? `${row.kind.replace("_", " ")} at ${row.stage}`;
}

/**
 * Everything that happened to one call, oldest first: proposed, held, approved or denied by whom and when,
 * executed, settled with the payment provider. Only for people of the call's tenant; anyone else gets null.
 */
export async function callTimeline(
  tenantId: string,
  callId: string,
): Promise<{ call: TimelineCall; approval: ApprovalRow | null; events: TimelineEvent[] } | null> {
  const call = await findTimelineCall(db, tenantId, callId);
  if (!call) return null;
  const [decisions, approval, refunds] = await Promise.all([
    findCallDecisions(db, tenantId, callId),
    findCallApproval(db, tenantId, call.approvalId),
    findCallRefunds(db, tenantId, callId),
  ]);
  const events: TimelineEvent[] = [
    {
      at: call.createdAt,
      title: "Proposed",
      by: call.agentName,
      code: null,
      kind: null,
      detail: call.argsCanonical && `Exact arguments: ${call.argsCanonical}`,
    },
    ...decisions.map((row) => ({
      at: row.createdAt,
      title: decisionTitle(row),
      by: row.actor,
      // A refund is unknown only until the provider answers; once it settled, that step is no warning.
      ...(row.code === "refund.outcome-unknown" && refunds.some((refund) => refund.settledAt)
        ? { code: null, kind: null }
        : { code: row.code, kind: row.kind }),
      detail:
        [
          // What the approval did next, after the words of who approved: "Refund reserved and sent to …".
          row.actor && row.code !== "approval.denied" ? (outcomeTitle(row.code) ?? row.code) : null,
          row.actor && row.code !== "approval.denied" ? loweredText(approval) : null,
          row.code === "approval.required" ? heldBecause(approval?.held) : null,
          row.actor && approval?.note ? `Why: ${approval.note}` : null,
          row.duplicateGuard && guardText(row.duplicateGuard),
          row.ruleVerdicts && rulesText(row.ruleVerdicts),
        ]
          .filter(Boolean)
          .join(" · ") || null,
      ...(row.duplicateGuard?.verdict === "held" ? { earlierCallId: row.duplicateGuard.of_call_id } : {}),
    })),
    ...refunds
      .filter((refund) => refund.settledAt)
      .map((refund) => ({
        at: refund.settledAt!,
        title:
          refund.status === "issued"
            ? "Settled with the payment provider"
            : refund.providerRefundId
              ? "Made by the payment provider after its release: counted once the order's other refund settles"
              : "Not made; the reservation was released",
        by: null,
        code: null,
        kind: null,
        detail: `${refund.providerRefundId ? `provider refund ${refund.providerRefundId}, ` : ""}${count(refund.attempts, "attempt")}`,
      })),
  ];
  events.sort((a, b) => a.at.getTime() - b.at.getTime());
  return { call, approval, events };
}
