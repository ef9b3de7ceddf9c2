import { setImmediate as nextTurn } from "node:timers/promises";
import { db } from "../../db";
import { newId } from "../../ids";
import { compileDraft, evaluateRules } from "../../policy-rules/evaluate";
import {
  differences,
  mergeReports,
  REPLAY_LIMITS,
  type DifferenceReport,
  type RecordedDecision,
} from "../../policy-rules/replay";
import { lacksNewerFacts, withMissingFacts, type RecordedFacts } from "../../policy-rules/schema";
import { validateRules, type Rule } from "../../policy-rules/validate";
import { claimReplay, findReplay, findRuleDecisions, findTenantRuleSets, insertReplay, updateReplay } from "./sql";

// Replay over recorded decisions (docs/decisions/019). Decisions are read in pages, newest first, up to a limit; a
// report says how many it read and whether older ones remained (`more`), never stopping silently. The rules page's
// replay runs in the instance's job runner (`runQueuedReplays`), off the request path, yielding to the event loop
// between pages, with its progress stored as it goes; the second admin's review and the shadow report read the
// newest `REPORT_LIMIT` at once.

/** The most recorded decisions a report read at once (the review, the shadow report, the command) reads. */
const REPORT_LIMIT = REPLAY_LIMITS.first;
/** The decisions read and evaluated at a time. */
const PAGE = 1_000;
/** The calls a stored report lists one by one; its counts by rule cover every call. */
const LISTED = 1_000;
const DAY_MS = 86_400_000;

function recorded(row: { callId: string; at: Date; rules: Record<string, unknown> }): RecordedDecision {
  return {
    callId: row.callId,
    at: row.at.toISOString(),
    ...(row.rules as Omit<RecordedDecision, "callId" | "at">),
    facts: withMissingFacts(row.rules.facts as RecordedFacts),
    shadow: (row.rules.shadow as RecordedDecision["shadow"]) ?? null,
    shadowId: (row.rules.shadowId as string | null) ?? null,
  };
}

/**
 * Reads the decisions of the last `days` days page by page, newest first, at most `limit`, handing each page to
 * `report` and awaiting `progress` after it; returns the merged report with how many lacked the newer facts and
 * whether older decisions remained.
 */
async function overPages(
  tenantId: string,
  days: number,
  limit: number,
  report: (page: RecordedDecision[]) => DifferenceReport,
  progress: (read: number) => Promise<void>,
): Promise<DifferenceReport> {
  const since = new Date(Date.now() - days * DAY_MS);
  let merged: DifferenceReport = { decisions: 0, differences: [], byRule: [] };
  let olderFacts = 0;
  let before: bigint | null = null;
  for (;;) {
    const wanted = Math.min(PAGE, limit - merged.decisions);
    const rows = await findRuleDecisions(db, tenantId, since, wanted + 1, before);
    const page = rows.slice(0, wanted);
    olderFacts += page.filter((row) => lacksNewerFacts(row.rules.facts as RecordedFacts)).length;
    merged = mergeReports(merged, report(page.map(recorded)));
    merged.differences = merged.differences.slice(0, LISTED);
    const more = rows.length > wanted;
    if (!more || merged.decisions >= limit) {
      return { ...merged, ...(olderFacts > 0 && { olderFacts }), ...(more && { more: true }) };
    }
    before = page.at(-1)!.id;
    await progress(merged.decisions);
  }
}

/**
 * Each page of decisions against the candidate, compiled into the engine's slot for this tenant and evaluated with
 * no await in between (a later draft of the tenant replaces it).
 */
const againstCandidate = (tenantId: string, rules: Rule[]) => (page: RecordedDecision[]) => {
  const draft = compileDraft(tenantId, rules);
  if (!draft) throw new Error("the rule engine could not load this rule set");
  return differences(page, (decision) => evaluateRules(draft, decision.facts));
};

/** The calls of the last `days` days the shadow set in force would have decided differently; null with no shadow. */
export async function shadowDifferences(tenantId: string, days = 7): Promise<DifferenceReport | null> {
  const { shadowRuleSetId } = await findTenantRuleSets(db, tenantId);
  if (!shadowRuleSetId) return null;
  return overPages(
    tenantId,
    days,
    REPORT_LIMIT,
    (page) =>
      differences(
        page.filter((decision) => decision.shadowId === shadowRuleSetId),
        (decision) => decision.shadow!,
      ),
    async () => {},
  );
}

/**
 * A candidate rule set replayed over the newest `limit` recorded decisions of the last `days` days, on the facts
 * each was made on: every call whose decision would change, grouped by rule. The candidate is never published.
 */
export async function replayRules(
  tenantId: string,
  text: string,
  days: number,
  limit: number = REPORT_LIMIT,
): Promise<{ ok: true; report: DifferenceReport } | { ok: false; errors: string[] }> {
  const validated = validateRules(text);
  if (!validated.ok) return validated;
  if (!compileDraft(tenantId, validated.rules))
    return { ok: false, errors: ["the rule engine could not load this rule set"] };
  const report = await overPages(tenantId, days, limit, againstCandidate(tenantId, validated.rules), async () => {});
  return { ok: true, report };
}

/** Queues a replay for the job runner; the candidate is checked first, so a queued replay always runs. */
export async function startReplay(
  admin: { id: string; tenantId: string },
  input: { text: string; days: number; limit: number },
): Promise<{ ok: true; id: string } | { ok: false; errors: string[] }> {
  const validated = validateRules(input.text);
  if (!validated.ok) return validated;
  const id = newId("rpl");
  await insertReplay(db, { id, tenantId: admin.tenantId, createdById: admin.id, ...input });
  return { ok: true, id };
}

/** A replay's state as the page polls it. */
export async function replayProgress(tenantId: string, id: string) {
  const row = await findReplay(db, tenantId, id);
  if (!row) return null;
  return {
    status: row.status,
    read: row.read,
    limit: row.limit,
    more: row.more,
    report: row.report as DifferenceReport | null,
    error: row.error,
  };
}

/**
 * Background job: runs queued replays one at a time, storing progress after every page and yielding to the event
 * loop between pages, so calls are served while a replay reads a million decisions. Returns how many it ran.
 */
export async function runQueuedReplays(): Promise<number> {
  let ran = 0;
  for (let row = await claimReplay(db); row; row = await claimReplay(db)) {
    const replay = row;
    ran += 1;
    const validated = validateRules(replay.text);
    try {
      if (!validated.ok) throw new Error(validated.errors.join("; "));
      const report = await overPages(
        replay.tenantId,
        replay.days,
        replay.limit,
        againstCandidate(`replay:${replay.tenantId}`, validated.rules),
        async (read) => {
          await updateReplay(db, replay.id, { status: "running", read });
          await nextTurn();
        },
      );
      await updateReplay(db, replay.id, { status: "done", read: report.decisions, more: Boolean(report.more), report });
    } catch (error) {
      await updateReplay(db, replay.id, {
        status: "failed",
        read: 0,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return ran;
}
