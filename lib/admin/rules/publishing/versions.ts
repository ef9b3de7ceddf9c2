import type { Tx } from "../../../db";
import { newId } from "../../../ids";
import type { RuleCase } from "../../../policy-rules/cases/cases";
import { insertAudit } from "../../sql";
import { insertRuleSet } from "../sql";

export type RulesStatus = "live" | "shadow";

/** What a publish puts in force: the text, its own test cases, and the version it restores when it is a rollback. */
export interface RulesInput {
  text: string;
  cases: RuleCase[];
  status: RulesStatus;
  restoresVersion: number | null;
}

/** Stores the text and its cases as the next version, in force as `status`, audited with whatever approved it. */
export async function putInForce(
  tx: Tx,
  author: { id: string; tenantId: string },
  input: RulesInput,
  approval: { changeId?: string; approvedById?: string | null },
): Promise<{ id: string; version: number; status: RulesStatus }> {
  const id = newId("prs");
  const version = await insertRuleSet(tx, {
    id,
    tenantId: author.tenantId,
    status: input.status,
    text: input.text,
    cases: input.cases,
    createdById: author.id,
    changeId: approval.changeId ?? null,
    approvedById: approval.approvedById ?? null,
    restoresVersion: input.restoresVersion,
  });
  await insertAudit(tx, author, "rules.published", {
    id,
    version,
    status: input.status,
    cases: input.cases.length,
    ...(input.restoresVersion !== null && { restoresVersion: input.restoresVersion }),
    ...approval,
  });
  return { id, version, status: input.status };
}
