import { consumeStepUpFor, type StepUpHolder } from "../../../auth/step-up/step-up";
import { sha256Hex } from "../../../canonical";
import { db, transaction } from "../../../db";
import {
  failureLines,
  RuleCasesSchema,
  runCases,
  type CaseResult,
  type RuleCase,
} from "../../../policy-rules/cases/cases";
import { lineDiff } from "../../../line-diff";
import { ruleSummary } from "../../../policy-rules/summary";
import { validateRules } from "../../../policy-rules/validate";
import { classifyAdminChange, loosenedRules } from "../../changes/loosening/loosening";
import { holdChange, type HeldChange } from "../../changes/two-admin";
import { shadowDifferences } from "../replay";
import { putInForce, type RulesInput, type RulesStatus } from "./versions";
import {
  clearShadowRuleSet,
  findRuleSetVersion,
  findRuleSetVersions,
  findTenantRuleSets,
  findTimeZone,
  lockRuleSets,
  type RuleSetVersion,
} from "../sql";
import { insertAudit } from "../../sql";

// Publishing a tenant's policy rules (docs/decisions/019). Every publish is a new version; an invalid text, or one
// whose own test cases fail, is refused with its errors in words and nothing changes. A shadow set enforces nothing
// and applies at once. A live set that only adds rules tightens and applies at once; one that drops or rewrites a
// rule in force loosens: it needs the admin's step-up for exactly this text, then waits for a second admin
// (docs/decisions/015). A rollback publishes an old version's text and cases as a new version, classified the same way.

interface Admin {
  id: string;
  tenantId: string;
}

export type PublishResult =
  | { ok: true; published: { id: string; version: number; status: RulesStatus } }
  | { ok: true; held: HeldChange; loosened: string[] }
  | { ok: false; code: "rules.invalid" | "rules.cases-failed"; errors: string[] }
  | { ok: false; code: "step-up.required"; loosened: string[] };

/** What a step-up for publishing consumes: this exact text as live rules. */
export const rulesItem = (text: string) => sha256Hex(`live\n${text}`);

export async function publishRules(
  admin: Admin,
  input: { text: string; status: RulesStatus; cases?: RuleCase[]; restoresVersion?: number },
  holder: StepUpHolder,
): Promise<PublishResult> {
  const validated = validateRules(input.text);
  if (!validated.ok) return { ok: false, code: "rules.invalid", errors: validated.errors };
  const rules: RulesInput = {
    text: input.text,
    cases: input.cases ?? [],
    status: input.status,
    restoresVersion: input.restoresVersion ?? null,
  };
  const failing = failureLines(runCases(validated.rules, rules.cases));
  if (failing.length > 0) return { ok: false, code: "rules.cases-failed", errors: failing };
  return transaction(async (tx) => {
    const current = await lockRuleSets(tx, admin.tenantId);
    const inForce = current.liveText === null ? { ok: true as const, rules: [] } : validateRules(current.liveText);
    const loosened = loosenedRules(inForce.ok ? inForce.rules : null, validated.rules);
    const kind = classifyAdminChange({ kind: "rules", status: rules.status, loosened });
    if (kind === "needs-second-admin") {
      const stepUp = await consumeStepUpFor(tx, holder, { kind: "admin.rules", digest: rulesItem(rules.text) });
      if (!stepUp) return { ok: false, code: "step-up.required", loosened };
      const held = await holdChange(
        tx,
        admin,
        {
          kind: "rules",
          change: {
            text: rules.text,
            cases: rules.cases,
            loosened,
            rules: validated.rules.length,
            restoresVersion: rules.restoresVersion,
          },
          base: { liveRuleSetId: current.liveRuleSetId },
        },
        stepUp,
      );
      return { ok: true, held, loosened };
    }
    return { ok: true, published: await putInForce(tx, admin, rules, {}) };
  });
}

/**
 * Rolls the live rules back to an old version: its text and cases published live as a new version that names the
 * version it restores, classified like any other publish (restoring a version that drops or rewrites a rule in
 * force waits for a second admin). Null for a version the tenant does not have.
 */
export async function rollbackRules(
  admin: Admin,
  version: number,
  holder: StepUpHolder,
): Promise<PublishResult | null> {
  const old = await findRuleSetVersion(db, admin.tenantId, { version });
  if (!old) return null;
  return publishRules(
    admin,
    { text: old.text, cases: storedCases(old), status: "live", restoresVersion: old.version },
    holder,
  );
}

/** A version's stored cases; a stored value that no longer reads as cases reads as none. */
function storedCases(version: Pick<RuleSetVersion, "cases">): RuleCase[] {
  const parsed = RuleCasesSchema.safeParse(version.cases);
  return parsed.success ? parsed.data : [];
}

/**
 * One rule tried in shadow beside the live set: published as a shadow set of the live rules (and their cases) with
 * this rule added, so the shadow report and metrics show exactly what this rule would change.
 */
export async function shadowOneRule(admin: Admin, ruleText: string, holder: StepUpHolder): Promise<PublishResult> {
  const rule = validateRules(ruleText);
  if (!rule.ok) return { ok: false, code: "rules.invalid", errors: rule.errors };
  if (rule.rules.length !== 1) {
    return {
      ok: false,
      code: "rules.invalid",
      errors: [`to try one rule beside the live set, give exactly one rule; this text has ${rule.rules.length}`],
    };
  }
  const { liveRuleSetId } = await findTenantRuleSets(db, admin.tenantId);
  const live = liveRuleSetId ? await findRuleSetVersion(db, admin.tenantId, { id: liveRuleSetId }) : null;
  const text = live ? `${live.text.trimEnd()}\n\n${ruleText.trim()}\n` : ruleText;
  return publishRules(admin, { text, status: "shadow", cases: live ? storedCases(live) : [] }, holder);
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

/** The line diff from one of the tenant's versions to another; null when either is not the tenant's. */
export async function compareVersions(tenantId: string, from: number, to: number) {
  const [before, after] = await Promise.all([
    findRuleSetVersion(db, tenantId, { version: from }),
    findRuleSetVersion(db, tenantId, { version: to }),
  ]);
  if (!before || !after) return null;
  return { from, to, lines: lineDiff(before.text, after.text) };
}

/** Everything the rules page shows, in one call: the sets in force with what each rule does, history, shadow report. */
export async function rulesOverview(tenantId: string) {
  const [sets, history, shadowReport, timeZone] = await Promise.all([
    findTenantRuleSets(db, tenantId),
    findRuleSetVersions(db, tenantId, 200),
    shadowDifferences(tenantId),
    findTimeZone(db, tenantId),
  ]);
  // Each stored text is checked once per page, however many places show it (its card and its history row).
  const checked = new Map<string, ReturnType<typeof validateRules>>();
  const validatedOnce = (text: string) => checked.get(text) ?? checked.set(text, validateRules(text)).get(text)!;
  // A text that no longer validates lists no rules.
  const ruleCount = (text: string) => {
    const validated = validatedOnce(text);
    return validated.ok ? validated.rules.length : 0;
  };
  const inForce = (id: string | null) => {
    const row = history.find((version) => version.id === id);
    if (!row) return null;
    // A set passed these checks when it was published; a later release's schema may refuse it, and the page says so.
    const validated = validatedOnce(row.text);
    return {
      version: row.version,
      text: row.text,
      cases: JSON.stringify(storedCases(row), null, 2),
      author: row.author,
      createdAt: row.createdAt.toISOString(),
      summaries: validated.ok ? validated.rules.map((rule) => ({ id: rule.id, text: ruleSummary(rule) })) : [],
      problems: validated.ok ? [] : validated.errors,
    };
  };
  return {
    live: inForce(sets.liveRuleSetId),
    shadow: inForce(sets.shadowRuleSetId),
    history: history.map((row) => ({
      id: row.id,
      version: row.version,
      status: row.status,
      text: row.text,
      cases: storedCases(row).length,
      author: row.author,
      createdAt: row.createdAt.toISOString(),
      changeId: row.changeId,
      approvedBy: row.approvedBy,
      restoresVersion: row.restoresVersion,
      rules: ruleCount(row.text),
      inForce: row.id === sets.liveRuleSetId ? "live" : row.id === sets.shadowRuleSetId ? "shadow" : null,
    })),
    shadowReport,
    timeZone,
  };
}

export type DraftCheck =
  | { ok: true; summaries: { id: string; text: string }[]; cases: CaseResult[] }
  | { ok: false; code: "rules.invalid"; errors: string[] };

/** What the editor's Check shows: the text's errors in words, or what each rule does and how its cases fare. */
export function checkDraft(text: string, cases: RuleCase[]): DraftCheck {
  const validated = validateRules(text);
  if (!validated.ok) return { ok: false, code: "rules.invalid", errors: validated.errors };
  return {
    ok: true,
    summaries: validated.rules.map((rule) => ({ id: rule.id, text: ruleSummary(rule) })),
    cases: runCases(validated.rules, cases),
  };
}
