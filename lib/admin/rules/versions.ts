import type { Tx } from "../../db";
import { newId } from "../../ids";
import { insertAudit } from "../sql";
import { insertRuleSet } from "./sql";

export type RulesStatus = "live" | "shadow";

/** Stores the text as the next version, in force as `status`, audited with whatever approved it. */
export async function putInForce(
  tx: Tx,
  author: { id: string; tenantId: string },
  input: { text: string; status: RulesStatus },
  approval: { changeId?: string; approvedById?: string },
): Promise<{ id: string; version: number; status: RulesStatus }> {
  const id = newId("prs");
  const version = await insertRuleSet(tx, {
    id,
    tenantId: author.tenantId,
    status: input.status,
    text: input.text,
    createdById: author.id,
  });
  await insertAudit(tx, author, "rules.published", { id, version, status: input.status, ...approval });
  return { id, version, status: input.status };
}
