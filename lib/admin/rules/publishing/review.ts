import { db } from "../../../db";
import { lineDiff, type DiffLine } from "../../../line-diff";
import type { DifferenceReport } from "../../../policy-rules/replay/replay";
import { replayRules } from "../replay";
import { findReviewReplay, findRuleSetVersion, storeReviewReplay, type StoredReviewReplay } from "../sql";

/** The days of recorded decisions a waiting rules change is replayed over for the admin who decides it. */
const REVIEW_DAYS = 7;

export interface RulesReview {
  /** The live version the change was proposed against (null: there were no live rules). */
  baseVersion: number | null;
  /** The line diff from that version's text to the proposed text. */
  diff: DiffLine[];
  /** The recorded calls of the `days` days up to the replay that the proposed text would decide differently. */
  replay: DifferenceReport | null;
  days: number;
  replayErrors: string[];
}

/** The change's replay kept for the tenant's live rule set; made and kept first when there is none. */
async function keptReplay(tenantId: string, changeId: string, text: string): Promise<StoredReviewReplay> {
  const { liveRuleSetId, stored } = await findReviewReplay(db, tenantId, changeId);
  if (stored) return stored;
  const replayed = await replayRules(tenantId, text, REVIEW_DAYS);
  const made = replayed.ok ? { report: replayed.report, errors: [] } : { report: null, errors: replayed.errors };
  await storeReviewReplay(db, { changeId, liveRuleSetId, ...made });
  return made;
}

/**
 * What the second admin reads before deciding a waiting rules change (issue 38): the full diff from the live
 * version it was proposed against, computed when the page is shown, and the replay's verdict changes. The replay
 * reads up to 10,000 decisions, so the first showing makes it and every later one, on any instance, reads it kept,
 * until the tenant's live rule set changes.
 */
export async function reviewRulesChange(
  tenantId: string,
  changeId: string,
  change: Record<string, unknown>,
  base: Record<string, unknown>,
): Promise<RulesReview> {
  const text = String(change.text);
  const baseId = typeof base.liveRuleSetId === "string" ? base.liveRuleSetId : null;
  const before = baseId ? await findRuleSetVersion(db, tenantId, { id: baseId }) : null;
  const replayed = await keptReplay(tenantId, changeId, text);
  return {
    baseVersion: before?.version ?? null,
    diff: lineDiff(before?.text ?? "", text),
    replay: replayed.report,
    days: REVIEW_DAYS,
    replayErrors: replayed.errors,
  };
}
