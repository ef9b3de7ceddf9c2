import { setImmediate as nextTurn } from "node:timers/promises";
import { db, transaction } from "../../db";
import { newId } from "../../ids";
import { compileDraft, evaluateRules } from "../../policy-rules/engine/evaluate";
import {
  differences,
  mergeReports,
  REPLAY_LIMITS,
  type DifferenceReport,
  type RecordedDecision,
} from "../../policy-rules/replay/replay";
import { lacksNewerFacts, withMissingFacts, type RecordedFacts } from "../../policy-rules/schema";
import { validateRules, type Rule } from "../../policy-rules/validate";
import {
  claimReplay,
  findReplay,
  findRuleDecisions,
  findTenantRuleSets,
  insertReplayUnderCap,
  updateReplay,
} from "./sql";

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

/** Where a paged read stands: the last decision-log id read, the report so far and how many lacked the newer facts. */
interface PageState {
  before: bigint | null;
  report: DifferenceReport;
  olderFacts: number;
}

const START: PageState = { before: null, report: { decisions: 0, differences: [], byRule: [] }, olderFacts: 0 };

/**
 * Reads the decisions of the last `days` days page by page, newest first, at most `limit` in all, from `from`,
 * handing each page to `report` and awaiting `progress` after it. Done with the merged report, saying how many lacked
 * the newer facts and whether older decisions remained; or, once past `until`, paused with where it stands.
 */
async function overPages(
  tenantId: string,
  days: number,
  limit: number,
  report: (page: RecordedDecision[]) => DifferenceReport,
  options: { from?: PageState; until?: number; page?: number; progress?: (read: number) => Promise<void> } = {},
): Promise<{ done: true; report: DifferenceReport } | { done: false; state: PageState }> {
  const since = new Date(Date.now() - days * DAY_MS);
  let { before, report: merged, olderFacts } = options.from ?? START;
  for (;;) {
    const wanted = Math.min(options.page ?? PAGE, limit - merged.decisions);
    const rows = await findRuleDecisions(db, tenantId, since, wanted + 1, before);
    const page = rows.slice(0, wanted);
    olderFacts += page.filter((row) => lacksNewerFacts(row.rules.facts as RecordedFacts)).length;
    merged = mergeReports(merged, report(page.map(recorded)));
    merged.differences = merged.differences.slice(0, LISTED);
    const more = rows.length > wanted;
    if (!more || merged.decisions >= limit) {
      const done = { ...merged, ...(olderFacts > 0 && { olderFacts }), ...(more && { more: true }) };
      return { done: true, report: done };
    }
    before = page.at(-1)!.id;
    if (options.until !== undefined && Date.now() >= options.until)
      return { done: false, state: { before, report: merged, olderFacts } };
    await options.progress?.(merged.decisions);
  }
}

/** A paged read that is never paused: its report. */
async function wholly(read: ReturnType<typeof overPages>): Promise<DifferenceReport> {
  const result = await read;
  if (!result.done) throw new Error("a replay without a deadline paused");
  return result.report;
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
  return wholly(
    overPages(tenantId, days, REPORT_LIMIT, (page) =>
      differences(
        page.filter((decision) => decision.shadowId === shadowRuleSetId),
        (decision) => decision.shadow!,
      ),
    ),
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
  const report = await wholly(overPages(tenantId, days, limit, againstCandidate(tenantId, validated.rules)));
  return { ok: true, report };
}

/**
 * Queues a replay for the job runner; the candidate is checked first, so a queued replay always runs. Refused, with
 * nothing queued, while the tenant has `REPLAY_LIMITS.perTenant` replays waiting or running.
 */
export async function startReplay(
  admin: { id: string; tenantId: string },
  input: { text: string; days: number; limit: number },
): Promise<
  { ok: true; id: string } | { ok: false; code: "rules.invalid" | "rules.too-many-replays"; message: string }
> {
  const validated = validateRules(input.text);
  if (!validated.ok) return { ok: false, code: "rules.invalid", message: validated.errors.join("\n") };
  const id = newId("rpl");
  const row = { id, tenantId: admin.tenantId, createdById: admin.id, ...input };
  if (!(await transaction((tx) => insertReplayUnderCap(tx, row, REPLAY_LIMITS.perTenant))))
    return {
      ok: false,
      code: "rules.too-many-replays",
      message: `Your tenant already has ${REPLAY_LIMITS.perTenant} replays waiting or running, the most at once. Wait for one of them to finish, then replay again; nothing was queued.`,
    };
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
 * A job run's time: replays are read in slices of this long, so no run of the job lasts long enough for the
 * instance's readiness check to call it stuck; a replay not finished is queued again where it stopped.
 */
const SLICE_MS = 20_000;

/**
 * Background job: runs queued replays for one slice of time, storing progress after every page and yielding to the
 * event loop between pages, so calls are served while a replay reads a million decisions; a replay not finished in
 * the slice is queued again with where it stopped. Returns how many replays it worked on.
 */
export async function runQueuedReplays({ sliceMs = SLICE_MS, page = PAGE } = {}): Promise<number> {
  const until = Date.now() + sliceMs;
  let worked = 0;
  // At least one replay a run, however short the slice; then others while the slice lasts.
  for (let replay = await claimReplay(db); replay; replay = Date.now() < until ? await claimReplay(db) : null) {
    worked += 1;
    try {
      const validated = validateRules(replay.text);
      if (!validated.ok) throw new Error(validated.errors.join("; "));
      const partial = replay.report as (DifferenceReport & { olderFacts?: number }) | null;
      const from =
        replay.cursor === null || !partial
          ? undefined
          : { before: replay.cursor, report: partial, olderFacts: partial.olderFacts ?? 0 };
      const result = await overPages(
        replay.tenantId,
        replay.days,
        replay.limit,
        againstCandidate(`replay:${replay.tenantId}`, validated.rules),
        {
          from,
          until,
          page,
          progress: async (read) => {
            await updateReplay(db, replay.id, { status: "running", read });
            await nextTurn();
          },
        },
      );
      if (result.done) {
        const { report } = result;
        await updateReplay(db, replay.id, {
          status: "done",
          read: report.decisions,
          more: Boolean(report.more),
          report,
        });
      } else {
        const { before, report, olderFacts } = result.state;
        await updateReplay(db, replay.id, {
          status: "queued",
          read: report.decisions,
          cursor: before!,
          report: { ...report, olderFacts },
        });
      }
    } catch (error) {
      await updateReplay(db, replay.id, {
        status: "failed",
        read: 0,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return worked;
}
