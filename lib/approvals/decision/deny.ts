import type { Tx } from "../../db";
import { outcome } from "../../outcome";
import { shorten } from "../../words";
import { MODEL_NOTE_MAX } from "../words";
import { closeRequest } from "./close";
import { decideLocked, type DecisionClaim, type PendingDecision } from "./lock";
import type { Approver, DecisionResult } from "./types";

/** Denies one pending request with the reason the agent will read; every call waiting on it becomes approval.denied. */
export async function denyRequest(
  approver: Approver,
  approvalId: string,
  reason: string | null,
  claim?: DecisionClaim,
): Promise<DecisionResult> {
  return decideLocked(approver, approvalId, "deny", (tx, pending) => deny(tx, pending, reason), undefined, claim);
}

async function deny(tx: Tx, pending: PendingDecision, note: string | null): Promise<DecisionResult> {
  // The reason as the model reads it: a note of nothing but spaces or invisible characters is no reason.
  const reason = noteForModel(note ?? "");
  if (!reason) return pending.refuse("approval.reason-required", "say why it is denied: the agent reads the reason");
  const denied = outcome("approval.denied", { reason });
  await closeRequest(tx, pending, "denied", denied, note, { reason: note });
  return { ok: true, approvalId: pending.request.id, status: "denied", outcome: denied };
}

/** A supervisor's deny note as the model may read it: one line of plain text, at most MODEL_NOTE_MAX characters. */
function noteForModel(note: string): string {
  const plain = note
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  return shorten(plain, MODEL_NOTE_MAX);
}
