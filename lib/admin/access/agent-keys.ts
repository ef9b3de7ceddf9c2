import { createApiKey } from "../../auth/keys/api-keys";
import { consumeStepUpFor, type StepUpHolder } from "../../auth/step-up/step-up";
import { db, transaction } from "../../db";
import { classifyAdminChange } from "../changes/loosening/loosening";
import { holdChange, type HeldChange } from "../changes/two-admin";
import { findAgentsWithKeys, findTenantAgent, holdKey, revokeKey } from "./sql";
import { insertAudit, type Admin } from "../sql";

export async function agentKeys(tenantId: string) {
  return findAgentsWithKeys(db, tenantId);
}

/**
 * A new key for one of the tenant's agents; the key is returned once and only its hash is kept. Consumes the
 * admin's step-up proof for this agent in the same transaction. A key for an agent who may refund works only once
 * a second admin approves it (or its delay passes).
 */
export async function createAgentKey(
  admin: Admin,
  userId: string,
  holder: StepUpHolder,
): Promise<
  | { ok: true; key: string; id: string; held: HeldChange | null }
  | { ok: false; problem: "not-found" | "step-up-required" }
> {
  return transaction(async (tx) => {
    const agent = await findTenantAgent(tx, admin.tenantId, userId);
    if (!agent) return { ok: false as const, problem: "not-found" as const };
    const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.key-created", userId });
    if (!stepUp) return { ok: false as const, problem: "step-up-required" as const };
    const created = await createApiKey(tx, agent);
    if (classifyAdminChange({ kind: "api-key.create", agentCanRefund: agent.canRefund }) === "needs-second-admin") {
      const held = await holdChange(
        tx,
        admin,
        {
          kind: "api-key",
          change: { userId, email: agent.email, keyId: created.id, prefix: created.key.slice(0, 10) },
          base: {},
        },
        stepUp,
      );
      await holdKey(tx, created.id, held.id);
      return { ok: true as const, ...created, held };
    }
    await insertAudit(tx, admin, "api-key.created", { keyId: created.id, userId, stepUp });
    return { ok: true as const, ...created, held: null };
  });
}

export async function revokeAgentKey(admin: Admin, keyId: string): Promise<boolean> {
  return transaction(async (tx) => {
    if ((await revokeKey(tx, admin.tenantId, keyId)) === 0) return false;
    await insertAudit(tx, admin, "api-key.revoked", { keyId });
    return true;
  });
}
