import type { Db } from "../db";
import type { DuplicateVerdict, HeldReason } from "../gateway";
import type { RuleVerdict } from "../policy-rules/engine/evaluate";

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

/** One decision-log row of a call, with the person who decided it ("Name (email)") if one did. */
export interface DecisionRow {
  id: bigint;
  kind: string;
  stage: string;
  code: string;
  actor: string | null;
  replayed: boolean;
  createdAt: Date;
  /** The duplicate-intent guard's verdict, when it looked at the call (`DuplicateVerdict`). */
  duplicateGuard: DuplicateVerdict | null;
  /** The live and shadow rules' verdicts, when the rules looked at the call (`RuleVerdict`). */
  ruleVerdicts: { live: RuleVerdict | null; shadow: RuleVerdict | null } | null;
}

/** The call's approval request, with the person who decided it ("Name (email)") if one did. */
export interface ApprovalRow {
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
  /** Why the call was held (the card's reasons) and the currency they are in; null for a request without them. */
  held: { reasons: HeldReason[]; currency: string } | null;
}

export interface RefundRow {
  id: string;
  amountCents: number;
  currency: string;
  status: string;
  providerRefundId: string | null;
  attempts: number;
  createdAt: Date;
  settledAt: Date | null;
}

/** The call with this id of the tenant, with its agent and its customer, or null. */
export async function findTimelineCall(db: Db, tenantId: string, callId: string): Promise<TimelineCall | null> {
  const [call] = await db.$queryRaw<TimelineCall[]>`
    SELECT t."id", t."toolName", t."orderId", t."kind", t."code", t."argsCanonical", t."createdAt", t."conversationId", t."approvalId",
           c."agentId", agent."name" || ' (' || agent."email" || ')' AS "agentName", cu."email" AS "customerEmail"
    FROM "ToolCall" t
    JOIN "Conversation" c ON c."id" = t."conversationId"
    LEFT JOIN "User" agent ON agent."id" = c."agentId"
    LEFT JOIN "Customer" cu ON cu."id" = c."customerId"
    WHERE t."id" = ${callId} AND t."tenantId" = ${tenantId}`;
  return call ?? null;
}

/** The call's decision-log rows, oldest first. */
export async function findCallDecisions(db: Db, tenantId: string, callId: string): Promise<DecisionRow[]> {
  return db.$queryRaw<DecisionRow[]>`
      SELECT d."id", d."kind", d."stage", d."code", u."name" || ' (' || u."email" || ')' AS "actor", d."replayed", d."createdAt",
             d."detail" -> 'duplicate_guard' AS "duplicateGuard",
             CASE WHEN d."detail" ? 'rules' THEN json_build_object('live', d."detail" -> 'rules' -> 'live',
               'shadow', d."detail" -> 'rules' -> 'shadow') END AS "ruleVerdicts"
      FROM "DecisionLog" d LEFT JOIN "User" u ON u."id" = d."actorId"
      WHERE d."toolCallId" = ${callId} AND d."tenantId" = ${tenantId}
      ORDER BY d."id"`;
}

/** The approval request with this id of the tenant (none when `approvalId` is null), with who decided it. */
export async function findCallApproval(
  db: Db,
  tenantId: string,
  approvalId: string | null,
): Promise<ApprovalRow | null> {
  const [approval] = await db.$queryRaw<ApprovalRow[]>`
      SELECT a."id", a."status", a."createdAt", a."expiresAt", a."decidedAt", u."name" || ' (' || u."email" || ')' AS "decidedBy", a."note", a."resultCode", a."impactCents", a."approvedArgs",
             CASE WHEN jsonb_typeof(a."preview"->'held') = 'array'
                  THEN json_build_object('reasons', a."preview"->'held', 'currency', COALESCE(a."preview"->'impact'->>'currency', ''))
             END AS "held"
      FROM "ApprovalRequest" a LEFT JOIN "User" u ON u."id" = a."decidedById"
      WHERE a."id" = ${approvalId} AND a."tenantId" = ${tenantId}`;
  return approval ?? null;
}

/** The call's refunds, oldest first. */
export async function findCallRefunds(db: Db, tenantId: string, callId: string): Promise<RefundRow[]> {
  return db.$queryRaw<RefundRow[]>`
      SELECT r."id", r."amountCents", r."currency", r."status", r."providerRefundId", r."attempts", r."createdAt", r."settledAt"
      FROM "Refund" r WHERE r."toolCallId" = ${callId} AND r."tenantId" = ${tenantId}
      ORDER BY r."createdAt"`;
}
