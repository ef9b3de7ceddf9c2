// The statements of a decision: the request locked, the call it binds, and the request closed or half approved.
import type { Client, Db, Tx } from "../../db";
import type { HeldReason } from "../../gateway";

/** The request row a decision works on, as locked by `lockRequest`. */
export interface LockedRequest {
  id: string;
  tenantId: string;
  conversationId: string;
  originCallId: string;
  toolName: string;
  orderId: string;
  argsHash: string;
  impactCents: number;
  status: string;
  requestedById: string;
  expiresAt: Date;
  firstApproverId: string | null;
  firstApprovedArgs: unknown;
  firstStepUpMethod: string | null;
  /** The earlier calls the request's card names as possible duplicates (the duplicate-intent guard). */
  shownDuplicates: string[];
}

/** Where a tenant's request sits (its conversation, tool and call), read without a lock; null when there is none. */
export async function locateRequest(db: Client, approvalId: string, tenantId: string) {
  return db.approvalRequest.findFirst({
    where: { id: approvalId, tenantId },
    select: { conversationId: true, toolName: true, originCallId: true },
  });
}

/** Locks a tenant's request until the transaction ends and returns it; null when there is none. */
export async function lockRequest(tx: Tx, approvalId: string, tenantId: string): Promise<LockedRequest | null> {
  const [request] = await tx.$queryRaw<LockedRequest[]>`
    SELECT "id", "tenantId", "conversationId", "originCallId", "toolName", "orderId", "argsHash", "impactCents",
           "status", "requestedById", "expiresAt", "firstApproverId", "firstApprovedArgs", "firstStepUpMethod",
           ARRAY(SELECT held ->> 'of_call_id' FROM jsonb_array_elements(COALESCE("preview" -> 'held', '[]'::jsonb)) AS held
                 WHERE held ->> 'rule' = 'possible_duplicate') AS "shownDuplicates"
    FROM "ApprovalRequest" WHERE "id" = ${approvalId} AND "tenantId" = ${tenantId} FOR UPDATE`;
  return request ?? null;
}

/** Adds a reason to the request's card (its preview's `held` list), as the next supervisor to open it reads it. */
export async function addHeldReason(tx: Tx, approvalId: string, reason: HeldReason): Promise<void> {
  await tx.$executeRaw`
    UPDATE "ApprovalRequest"
    SET "preview" = jsonb_set("preview", '{held}', COALESCE("preview" -> 'held', '[]'::jsonb) || jsonb_build_array(${JSON.stringify(reason)}::jsonb))
    WHERE "id" = ${approvalId}`;
}

/** The call a request was made for, as the argument binding compares it with the request. */
export interface OriginCall {
  id: string;
  toolName: string;
  conversationId: string;
  argsCanonical: string | null;
  argsHash: string | null;
  orderId: string | null;
}

/** The call a request was made for, with the arguments it binds; null when it is gone. */
export async function findOriginCall(db: Db, callId: string): Promise<OriginCall | null> {
  const [call] = await db.$queryRaw<OriginCall[]>`
    SELECT "id", "toolName", "conversationId", "argsCanonical", "argsHash", "orderId" FROM "ToolCall" WHERE "id" = ${callId}`;
  return call ?? null;
}

/** Keeps the first of two approvals on the request: who, when, the arguments approved and how they proved it. */
export async function markFirstApproval(
  tx: Tx,
  approvalId: string,
  first: { approverId: string; approved: Record<string, unknown>; stepUp: string | null },
): Promise<void> {
  await tx.$executeRaw`
    UPDATE "ApprovalRequest"
    SET "firstApproverId" = ${first.approverId}, "firstApprovedAt" = ${new Date().toISOString()}::timestamptz,
        "firstApprovedArgs" = ${JSON.stringify(first.approved)}::jsonb, "firstStepUpMethod" = ${first.stepUp}::text
    WHERE "id" = ${approvalId}`;
}

/**
 * Closes the request with its decision (and, for an approval, the arguments approved and the step-up used);
 * returns when the request was made.
 */
export async function markDecided(
  tx: Tx,
  approvalId: string,
  decision: {
    status: string;
    deciderId: string;
    note: string | null;
    resultCode: string;
    approval: { approved: Record<string, unknown>; stepUp: string | null } | null;
  },
): Promise<Date> {
  const { approval } = decision;
  const [row] = await tx.$queryRaw<{ createdAt: Date }[]>`
    UPDATE "ApprovalRequest"
    SET "status" = ${decision.status}, "decidedById" = ${decision.deciderId},
        "decidedAt" = ${new Date().toISOString()}::timestamptz, "note" = ${decision.note}::text,
        "resultCode" = ${decision.resultCode},
        "approvedArgs" = CASE WHEN ${approval !== null}::boolean THEN ${approval ? JSON.stringify(approval.approved) : null}::jsonb ELSE "approvedArgs" END,
        "stepUpMethod" = CASE WHEN ${approval !== null}::boolean THEN ${approval?.stepUp ?? null}::text ELSE "stepUpMethod" END
    WHERE "id" = ${approvalId}
    RETURNING "createdAt"`;
  if (!row) throw new Error(`approval request ${approvalId} vanished while it was locked`);
  return row.createdAt;
}
