import { db } from "../../../db";
import { lineDiff, type DiffLine } from "../../../line-diff";
import type { DifferenceReport } from "../../../policy-rules/replay/replay";
import { replayRules } from "../replay";
import { findRuleSetVersion } from "../sql";

/** The days of recorded decisions a waiting rules change is replayed over for the admin who decides it. */
const REVIEW_DAYS = 7;

export interface RulesReview {
  /** The live version the change was proposed against (null: there were no live rules). */
  baseVersion: number | null;
  /** The line diff from that version's text to the proposed text. */
  diff: DiffLine[];
  /** The recorded calls of the last `days` days the proposed text would decide differently. */
  replay: DifferenceReport | null;
  days: number;
  replayErrors: string[];
}

/**
 * What the second admin reads before deciding a waiting rules change (issue 38): the full diff from the live
 * version it was proposed against, and the replay's verdict changes, both computed when the page is shown.
 */
export async function reviewRulesChange(
  tenantId: string,
  change: Record<string, unknown>,
  base: Record<string, unknown>,
): Promise<RulesReview> {
  const text = String(change.text);
  const baseId = typeof base.liveRuleSetId === "string" ? base.liveRuleSetId : null;
  const before = baseId ? await findRuleSetVersion(db, tenantId, { id: baseId }) : null;
  const replayed = await replayRules(tenantId, text, REVIEW_DAYS);
  return {
    baseVersion: before?.version ?? null,
    diff: lineDiff(before?.text ?? "", text),
    replay: replayed.ok ? replayed.report : null,
    days: REVIEW_DAYS,
    replayErrors: replayed.ok ? [] : replayed.errors,
  };
}
