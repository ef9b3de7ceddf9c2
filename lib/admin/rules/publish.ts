import { consumeStepUpFor, type StepUpHolder } from "../../auth/step-up/step-up";
import { sha256Hex } from "../../canonical";
import { db, transaction } from "../../db";
import { compileDraft, evaluateRules } from "../../policy-rules/evaluate";
import { differences, type DifferenceReport, type RecordedDecision } from "../../policy-rules/replay";
import { ruleSummary } from "../../policy-rules/summary";
import { validateRules, type Rule } from "../../policy-rules/validate";
import { classifyAdminChange, loosenedRules } from "../changes/loosening";
import { holdChange, type HeldChange } from "../changes/two-admin";
import { putInForce, type RulesStatus } from "./versions";
import { clearShadowRuleSet, findRuleDecisions, findRuleSetVersions, findTenantRuleSets, lockRuleSets } from "./sql";
import { insertAudit } from "../sql";

// Publishing a tenant's policy rules (docs/decisions/019). Every publish is a new version; an invalid text is
// refused with its errors in words and nothing changes. A shadow set enforces nothing and applies at once. A live
// set that only adds rules tightens and applies at once; one that drops or rewrites a rule in force loosens: it needs
// the admin's step-up for exactly this text, then waits for a second admin (docs/decisions/015).

interface Admin {
  id: string;
  tenantId: string;
}

export type PublishResult =
  | { ok: true; published: { id: string; version: number; status: RulesStatus } }
  | { ok: true; held: HeldChange; loosened: string[] }
  | { ok: false; code: "rules.invalid"; errors: string[] }
  | { ok: false; code: "step-up.required"; loosened: string[] };

/** What a step-up for publishing consumes: this exact text as live rules. */
export const rulesItem = (text: string) => sha256Hex(`live\n${text}`);

export async function publishRules(
  admin: Admin,
  input: { text: string; status: RulesStatus },
  holder: StepUpHolder,
): Promise<PublishResult> {
  const validated = validateRules(input.text);
  if (!validated.ok) return { ok: false, code: "rules.invalid", errors: validated.errors };
  return transaction(async (tx) => {
    const current = await lockRuleSets(tx, admin.tenantId);
    const inForce = current.liveText === null ? { ok: true as const, rules: [] } : validateRules(current.liveText);
    const loosened = loosenedRules(inForce.ok ? inForce.rules : null, validated.rules);
    const kind = classifyAdminChange({ kind: "rules", status: input.status, loosened });
    if (kind === "needs-second-admin") {
      const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.rules", digest: rulesItem(input.text) });
      if (!stepUp) return { ok: false, code: "step-up.required", loosened };
      const held = await holdChange(
        tx,
        admin,
        {
          kind: "rules",
          change: { text: input.text, loosened, rules: validated.rules.length },
          base: { liveRuleSetId: current.liveRuleSetId },
        },
        stepUp,
      );
      return { ok: true, held, loosened };
    }
    return { ok: true, published: await putInForce(tx, admin, input, {}) };
  });
}

/** Stops the shadow evaluation; the live rules are untouched. */
export async function withdrawShadowRules(admin: Admin): Promise<boolean> {
  return transaction(async (tx) => {
    if (!(await clearShadowRuleSet(tx, admin.tenantId))) return false;
    await insertAudit(tx, admin, "rules.shadow-withdrawn", {});
    return true;
  });
}

/** The tenant's versions, newest first, for the history. */
export async function ruleSetHistory(tenantId: string, limit = 50) {
  return findRuleSetVersions(db, tenantId, limit);
}

/** A stored text's rules, as the page lists them; a text that no longer validates lists none. */
function rulesOf(text: string): Rule[] {
  const validated = validateRules(text);
  return validated.ok ? validated.rules : [];
}

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

/** Everything the rules page shows, in one call: the sets in force with what each rule does, history, shadow report. */
export async function rulesOverview(tenantId: string) {
  const [sets, history, shadowReport] = await Promise.all([
    findTenantRuleSets(db, tenantId),
    findRuleSetVersions(db, tenantId, 200),
    shadowDifferences(tenantId),
  ]);
  const inForce = (id: string | null) => {
    const row = history.find((version) => version.id === id);
    if (!row) return null;
    return {
      version: row.version,
      text: row.text,
      author: row.author,
      createdAt: row.createdAt.toISOString(),
      summaries: rulesOf(row.text).map((rule) => ({ id: rule.id, text: ruleSummary(rule) })),
    };
  };
  return {
    live: inForce(sets.liveRuleSetId),
    shadow: inForce(sets.shadowRuleSetId),
    history: history.map((row) => ({
      id: row.id,
      version: row.version,
      status: row.status,
      author: row.author,
      createdAt: row.createdAt.toISOString(),
      rules: rulesOf(row.text).length,
      inForce: row.id === sets.liveRuleSetId ? "live" : row.id === sets.shadowRuleSetId ? "shadow" : null,
    })),
    shadowReport,
  };
}
