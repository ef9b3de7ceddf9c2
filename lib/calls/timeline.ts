import "server-only";
import { db } from "../db";
import { outcomeTitle } from "./words";

export interface TimelineCall {
  id: string;
  toolName: string;
  orderId: string | null;
  kind: string;
  code: string;
  argsCanonical: string | null;
  createdAt: Date;
  conversationId: string;
  agentId: string;
  /** "Name (email)", like every person below. */
  agentName: string | null;
  customerEmail: string | null;
  approvalId: string | null;
}

export interface TimelineEvent {
  at: Date;
  /** What happened, in words. */
  title: string;
  /** Who did it, when a person did. */
  by: string | null;
  code: string | null;
  kind: string | null;
  detail: string | null;
}

interface DecisionRow {
  id: bigint;
  kind: string;
  stage: string;
  code: string;
  actor: string | null;
  replayed: boolean;
  createdAt: Date;
}

interface ApprovalRow {
  id: string;
  status: string;
  createdAt: Date;
  expiresAt: Date;
  decidedAt: Date | null;
  decidedBy: string | null;
  note: string | null;
  resultCode: string | null;
  impactCents: number;
  /** What the supervisor approved when it was less than proposed. */
  approvedArgs: unknown;
}

interface RefundRow {
  id: string;
  amountCents: number;
  currency: string;
  status: string;
  providerRefundId: string | null;
  attempts: number;
  createdAt: Date;
  settledAt: Date | null;
}

function decisionTitle(row: DecisionRow): string {
  if (row.actor && row.code === "approval.denied") return "Denied";
  if (row.actor) return `Approved; ${(outcomeTitle(row.code) ?? row.code).toLowerCase()}`;
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
  const [call] = await db.$queryRaw<TimelineCall[]>`
    SELECT t."id", t."toolName", t."orderId", t."kind", t."code", t."argsCanonical", t."createdAt", t."conversationId", t."approvalId",
           c."agentId", agent."name" || ' (' || agent."email" || ')' AS "agentName", cu."email" AS "customerEmail"
    FROM "ToolCall" t
    JOIN "Conversation" c ON c."id" = t."conversationId"
    LEFT JOIN "User" agent ON agent."id" = c."agentId"
    LEFT JOIN "Customer" cu ON cu."id" = c."customerId"
    WHERE t."id" = ${callId} AND t."tenantId" = ${tenantId}`;
  if (!call) return null;
  const [decisions, approvals, refunds] = await Promise.all([
    db.$queryRaw<DecisionRow[]>`
      SELECT d."id", d."kind", d."stage", d."code", u."name" || ' (' || u."email" || ')' AS "actor", d."replayed", d."createdAt"
      FROM "DecisionLog" d LEFT JOIN "User" u ON u."id" = d."actorId"
      WHERE d."toolCallId" = ${callId} AND d."tenantId" = ${tenantId}
      ORDER BY d."id"`,
    db.$queryRaw<ApprovalRow[]>`
      SELECT a."id", a."status", a."createdAt", a."expiresAt", a."decidedAt", u."name" || ' (' || u."email" || ')' AS "decidedBy", a."note", a."resultCode", a."impactCents", a."approvedArgs"
      FROM "ApprovalRequest" a LEFT JOIN "User" u ON u."id" = a."decidedById"
      WHERE a."id" = ${call.approvalId} AND a."tenantId" = ${tenantId}`,
    db.$queryRaw<RefundRow[]>`
      SELECT r."id", r."amountCents", r."currency", r."status", r."providerRefundId", r."attempts", r."createdAt", r."settledAt"
      FROM "Refund" r WHERE r."toolCallId" = ${callId} AND r."tenantId" = ${tenantId}
      ORDER BY r."createdAt"`,
  ]);
  const approval = approvals[0] ?? null;
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
      // An approved refund is unknown only until the provider answers; once it settled, that step is no warning.
      ...(row.actor && row.code === "refund.outcome-unknown" && refunds.some((refund) => refund.settledAt)
        ? { code: null, kind: null }
        : { code: row.code, kind: row.kind }),
      detail: row.actor && approval?.note ? `Note: ${approval.note}` : null,
    })),
    ...refunds
      .filter((refund) => refund.settledAt)
      .map((refund) => ({
        at: refund.settledAt!,
        title:
          refund.status === "issued"
            ? "Settled with the payment provider"
            : "Refused by the payment provider; the reservation was released",
        by: null,
        code: null,
        kind: null,
        detail: `${refund.providerRefundId ? `provider refund ${refund.providerRefundId}, ` : ""}${refund.attempts} attempt${refund.attempts === 1 ? "" : "s"}`,
      })),
  ];
  events.sort((a, b) => a.at.getTime() - b.at.getTime());
  return { call, approval, events };
}
