import { db } from "../../db";
import { compileDraft, evaluateRules } from "../../policy-rules/evaluate";
import { differences, type DifferenceReport, type RecordedDecision } from "../../policy-rules/replay";
import { lacksNewerFacts, withMissingFacts, type RecordedFacts } from "../../policy-rules/schema";
import { validateRules } from "../../policy-rules/validate";
import { findRuleDecisions, findTenantRuleSets } from "./sql";

/** The most recorded decisions a report reads: the newest first. */
const REPORT_LIMIT = 10_000;
const DAY_MS = 86_400_000;

/**
 * The decisions of the last `days` days with the facts they were made on; a decision recorded before a fact existed
 * reads it as `withMissingFacts` says (counted in `olderFacts`).
 */
async function recordedDecisions(
  tenantId: string,
  days: number,
): Promise<{ decisions: RecordedDecision[]; olderFacts: number }> {
  const rows = await findRuleDecisions(db, tenantId, new Date(Date.now() - days * DAY_MS), REPORT_LIMIT);
  let olderFacts = 0;
  const decisions = rows.map((row) => {
    const facts = row.rules.facts as RecordedFacts;
    if (lacksNewerFacts(facts)) olderFacts += 1;
    return {
      callId: row.callId,
      at: row.at.toISOString(),
      ...(row.rules as Omit<RecordedDecision, "callId" | "at">),
      facts: withMissingFacts(facts),
      shadow: (row.rules.shadow as RecordedDecision["shadow"]) ?? null,
      shadowId: (row.rules.shadowId as string | null) ?? null,
    };
  });
  return { decisions, olderFacts };
}

/** The calls of the last `days` days the shadow set in force would have decided differently; null with no shadow. */
export async function shadowDifferences(tenantId: string, days = 7): Promise<DifferenceReport | null> {
  const { shadowRuleSetId } = await findTenantRuleSets(db, tenantId);
  if (!shadowRuleSetId) return null;
  const { decisions } = await recordedDecisions(tenantId, days);
  const seen = decisions.filter((decision) => decision.shadowId === shadowRuleSetId);
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
  const { decisions, olderFacts } = await recordedDecisions(tenantId, days);
  // Compiled and evaluated with no await between: a later draft of the tenant replaces this one.
  const draft = compileDraft(tenantId, validated.rules);
  if (!draft) return { ok: false, errors: ["the rule engine could not load this rule set"] };
  const report = differences(decisions, (decision) => evaluateRules(draft, decision.facts));
  return { ok: true, report: { ...report, ...(olderFacts > 0 && { olderFacts }) } };
}
