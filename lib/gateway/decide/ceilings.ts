import type { Db } from "../../db";
import type { CeilingHit } from "./policy";
import { readExposure, releaseExposure, reserveExposure, type ExposureReservation } from "./sql";
import type { ConversationFacts } from "../types";

/**
 * Stage 10's exposure ceilings, the last check before an irreversible effect runs without a person: reserves its
 * impact against the agent's and the tenant's rolling 24-hour ceilings (docs/decisions/021). The reservation is one
 * conditional upsert of each running total, which PostgreSQL re-checks under the row's lock, so the ceilings stay exact
 * across instances; those locks are held from here to the commit, the effect's own statements and no read before
 * them. A ceiling it would pass holds the call for a person instead, with the numbers the supervisor's card shows.
 */
export async function reserveCeilings(
  client: Db,
  conversation: ConversationFacts,
  impactCents: number,
): Promise<{ ok: true; reservation: ExposureReservation } | { ok: false; ceiling: CeilingHit }> {
  const at = { tenantId: conversation.tenantId, agentId: conversation.agentId, cents: impactCents };
  const reserved = await reserveExposure(client, at);
  if (reserved && reserved.agentRunningCents !== null) {
    return {
      ok: true,
      reservation: { ...reserved, cents: impactCents, agentRunningCents: reserved.agentRunningCents },
    };
  }
  if (reserved) await releaseExposure(client, { ...at, agentId: null });
  return { ok: false, ceiling: await ceilingPassed(client, conversation, impactCents) };
}

/** Gives back both parts of a reservation the call will not use (its transaction still holds their locks). */
export async function releaseCeilings(client: Db, conversation: ConversationFacts, impactCents: number): Promise<void> {
  await releaseExposure(client, { tenantId: conversation.tenantId, agentId: conversation.agentId, cents: impactCents });
}

/** The ceiling a refused reservation would pass, the agent's first, with what it had used. */
export async function ceilingPassed(
  client: Db,
  conversation: ConversationFacts,
  impactCents: number,
): Promise<CeilingHit> {
  const used = await readExposure(client, conversation);
  if (used.agent + impactCents > used.agentCeilingCents) {
    return {
      name: "agent_daily_ceiling_cents",
      limit_cents: used.agentCeilingCents,
      used_cents: used.agent,
      window_hours: 24,
    };
  }
  return {
    name: "tenant_daily_ceiling_cents",
    limit_cents: used.tenantCeilingCents,
    used_cents: used.tenant,
    window_hours: 24,
  };
}
