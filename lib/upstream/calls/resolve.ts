import { db, transaction } from "../../db";
import { env } from "../../env";
import { recordLaterOutcome } from "../../gateway";
import { outcome, type Outcome } from "../../outcome";
import { findLostCalls, resolveLostCall } from "../sql";

export interface Resolver {
  userId: string;
  tenantId: string;
  role: string;
}

/**
 * How long past `UPSTREAM_TIMEOUT_MS` a call may stay `sending` before its answer counts as lost: by then the process
 * that sent it has recorded the answer or moved it to `unknown`, unless it died or could not write.
 */
export const LOST_AFTER_TIMEOUT_MS = 60_000;

const lostBefore = () => new Date(Date.now() - env().UPSTREAM_TIMEOUT_MS - LOST_AFTER_TIMEOUT_MS);

/**
 * A supervisor, having checked the upstream system, says whether a call whose answer was lost happened (`done`) or
 * not. Only a lost call of the supervisor's own tenant can be resolved, once; nothing is sent again.
 */
export async function resolveUnknownCall(
  resolver: Resolver,
  toolCallId: string,
  done: boolean,
): Promise<{ ok: true; outcome: Outcome } | { ok: false; code: string; message: string }> {
  if (resolver.role !== "SUPERVISOR")
    return { ok: false, code: "forbidden", message: "only supervisors resolve upstream calls" };
  const resolved = done
    ? outcome("upstream.resolved-done", {
        reason: "A supervisor checked the upstream system: the call was carried out.",
      })
    : outcome("upstream.resolved-not-done", {
        reason: "A supervisor checked the upstream system: the call was not carried out. It may be proposed again.",
      });
  const moved = await transaction(async (tx) => {
    const call = { toolCallId, tenantId: resolver.tenantId, resolvedById: resolver.userId, lostBefore: lostBefore() };
    if (!(await resolveLostCall(tx, call))) return false;
    await recordLaterOutcome(tx, {
      callId: toolCallId,
      approvalId: null,
      outcome: resolved,
      decision: { actorId: resolver.userId, latencyMs: 0, detail: { resolved: done ? "done" : "not-done" } },
    });
    return true;
  });
  return moved
    ? { ok: true, outcome: resolved }
    : { ok: false, code: "call.not-unknown", message: "no call of yours is waiting to be resolved under that id" };
}

/** The tenant's calls whose answer was lost, for the desk: oldest first. */
export function unknownCalls(tenantId: string) {
  return findLostCalls(db, tenantId, lostBefore());
}
