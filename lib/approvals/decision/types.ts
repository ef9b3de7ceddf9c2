import type { Outcome } from "../../outcome";

export interface Approver {
  userId: string;
  tenantId: string;
  role: string;
  /** The session deciding: a step-up proof counts only in the session that made it (none: no proof counts). */
  sessionId?: string | null;
}

export type DecisionFailure =
  | "approval.not-found"
  | "approval.forbidden"
  | "approval.self-approval"
  | "approval.already-decided"
  | "approval.expired"
  | "approval.binding-mismatch"
  | "approval.recheck-failed"
  | "approval.retry"
  | "approval.edit-refused"
  | "approval.step-up-required"
  | "approval.same-approver"
  | "approval.reason-required"
  | "approval.claim-taken"
  | "host.error";

export type DecisionResult =
  | { ok: true; approvalId: string; status: "approved" | "denied"; outcome: Outcome }
  /** The first of two approvals above the two-person threshold: recorded, nothing executed yet. */
  | { ok: true; approvalId: string; status: "partial"; outcome?: undefined }
  | { ok: false; approvalId: string; code: DecisionFailure; message: string; outcome?: Outcome };
