import { db } from "../../db";
import { compileDraft, evaluateRules } from "../../policy-rules/evaluate";
import { differences, type DifferenceReport, type RecordedDecision } from "../../policy-rules/replay";
import { validateRules } from "../../policy-rules/validate";
import { findRuleDecisions, findTenantRuleSets } from "./sql";

/** The most recorded decisions a report reads: the newest first. */
const REPORT_LIMIT = 10_000;
const DAY_MS = 86_400_000;

async function recordedDecisions(tenantId: string, days: number): Promise<RecordedDecision[]> {
  const rows = await findRuleDecisions(db, tenantId, new Date(Date.now() - days * DAY_MS), REPORT_LIMIT);
  return rows.map((row) => ({
    callId: row.callId,
    at: row.at.toISOString(),
    ...(row.rules as Omit<RecordedDecision, "callId" | "at">),
    shadow: (row.rules.shadow as RecordedDecision["shadow"]) ?? null,
    shadowId: (row.rules.shadowId as string | null) ?? null,
  }));
}

/** The calls of the last `days` days the shadow set in force would have decided differently; null with no shadow. */
export async function shadowDifferences(tenantId: string, days = 7): Promise<DifferenceReport | null> {
  const { shadowRuleSetId } = await findTenantRuleSets(db, tenantId);
  if (!shadowRuleSetId) return null;
  const seen = (await recordedDecisions(tenantId, days)).filter((decision) => decision.shadowId === shadowRuleSetId);
  return differences(seen, (decision) => decision.shadow!);
}

/**
 * A candidate rule set replayed over the last `days` days of recorded decisions, on the facts each was made on:
 * every call whose decision would change, grouped by rule. The candidate is never published.
 */
export async function replayRules(
  tenantId: string,
  text: string,
  days: number,
): Promise<{ ok: true; report: DifferenceReport } | { ok: false; errors: string[] }> {
  const validated = validateRules(text);
  if (!validated.ok) return validated;
  const decisions = await recordedDecisions(tenantId, days);
  // Compiled and evaluated with no await between: a later draft of the tenant replaces this one.
  const draft = compileDraft(tenantId, validated.rules);
  if (!draft) return { ok: false, errors: ["the rule engine could not load this rule set"] };
  return { ok: true, report: differences(decisions, (decision) => evaluateRules(draft, decision.facts)) };
}
