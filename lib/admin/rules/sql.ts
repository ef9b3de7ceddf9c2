import type { Db, Tx } from "../../db";
import { Prisma } from "../../generated/prisma/client";
import type { DifferenceReport } from "../../policy-rules/replay/replay";

/** The tenant's rule sets in force, the tenant row locked until the transaction ends (publishing is one at a time). */
export async function lockRuleSets(
  tx: Tx,
  tenantId: string,
): Promise<{ liveRuleSetId: string | null; shadowRuleSetId: string | null; liveText: string | null }> {
  const [row] = await tx.$queryRaw<
    { liveRuleSetId: string | null; shadowRuleSetId: string | null; liveText: string | null }[]
  >`
    SELECT t."liveRuleSetId", t."shadowRuleSetId", r."text" AS "liveText"
    FROM "Tenant" t LEFT JOIN "PolicyRuleSet" r ON r."id" = t."liveRuleSetId"
    WHERE t."id" = ${tenantId} FOR UPDATE OF t`;
  return row;
}

/**
 * Stores a rule set as the tenant's next version, with its cases, the waiting change that made it (if any) and the
 * version it restores (a rollback), and puts it in force as `status`; returns its version.
 */
export async function insertRuleSet(
  tx: Tx,
  set: {
    id: string;
    tenantId: string;
    status: "live" | "shadow";
    text: string;
    cases: unknown[];
    createdById: string;
    changeId: string | null;
    approvedById: string | null;
    restoresVersion: number | null;
  },
): Promise<number> {
  const [row] = await tx.$queryRaw<{ version: number }[]>`
    INSERT INTO "PolicyRuleSet" ("id", "tenantId", "version", "status", "text", "cases", "createdById", "changeId",
      "approvedById", "restoresVersion")
    SELECT ${set.id}, ${set.tenantId}, COALESCE(MAX("version"), 0) + 1, ${set.status}, ${set.text},
      ${JSON.stringify(set.cases)}::jsonb, ${set.createdById}, ${set.changeId}, ${set.approvedById},
      ${set.restoresVersion}::int
    FROM "PolicyRuleSet" WHERE "tenantId" = ${set.tenantId}
    RETURNING "version"`;
  await (set.status === "live"
    ? tx.$executeRaw`UPDATE "Tenant" SET "liveRuleSetId" = ${set.id} WHERE "id" = ${set.tenantId}`
    : tx.$executeRaw`UPDATE "Tenant" SET "shadowRuleSetId" = ${set.id} WHERE "id" = ${set.tenantId}`);
  return row.version;
}

/** Stops evaluating the tenant's shadow rule set; false when it had none. */
export async function clearShadowRuleSet(tx: Tx, tenantId: string): Promise<boolean> {
  const count = await tx.$executeRaw`
    UPDATE "Tenant" SET "shadowRuleSetId" = NULL WHERE "id" = ${tenantId} AND "shadowRuleSetId" IS NOT NULL`;
  return count > 0;
}

export interface RuleSetVersion {
  id: string;
  version: number;
  status: string;
  text: string;
  cases: unknown[];
  createdAt: Date;
  author: string;
  changeId: string | null;
  approvedBy: string | null;
  restoresVersion: number | null;
}

const VERSION_COLUMNS = Prisma.sql`r."id", r."version", r."status", r."text", r."cases", r."createdAt",
  COALESCE(u."name" || ' (' || u."email" || ')', r."createdById") AS "author", r."changeId",
  COALESCE(a."name" || ' (' || a."email" || ')', r."approvedById") AS "approvedBy",
  r."restoresVersion"
  FROM "PolicyRuleSet" r LEFT JOIN "User" u ON u."id" = r."createdById" LEFT JOIN "User" a ON a."id" = r."approvedById"`;

/** The tenant's rule set versions, newest first, with who published each and the change that made it. */
export async function findRuleSetVersions(db: Db, tenantId: string, limit: number): Promise<RuleSetVersion[]> {
  return db.$queryRaw<RuleSetVersion[]>`
    SELECT ${VERSION_COLUMNS}
    WHERE r."tenantId" = ${tenantId}
    ORDER BY r."version" DESC LIMIT ${limit}`;
}

/** One of the tenant's versions, by its number or by its id; null for a missing or foreign one. */
export async function findRuleSetVersion(
  db: Db,
  tenantId: string,
  which: { version: number } | { id: string },
): Promise<RuleSetVersion | null> {
  const where = "version" in which ? Prisma.sql`r."version" = ${which.version}` : Prisma.sql`r."id" = ${which.id}`;
  const [row] = await db.$queryRaw<RuleSetVersion[]>`
    SELECT ${VERSION_COLUMNS}
    WHERE r."tenantId" = ${tenantId} AND ${where}`;
  return row ?? null;
}

/**
 * Decision-log rows since `since` that kept the facts their rules read, newest first, at most `limit`, older than
 * the row `before` when given (the previous page's last id).
 */
export async function findRuleDecisions(
  db: Db,
  tenantId: string,
  since: Date,
  limit: number,
  before: bigint | null = null,
): Promise<{ id: bigint; callId: string; at: Date; rules: Record<string, unknown> }[]> {
  return db.$queryRaw`
    SELECT "id", "toolCallId" AS "callId", "createdAt" AS "at", "detail"->'rules' AS "rules"
    FROM "DecisionLog"
    WHERE "tenantId" = ${tenantId} AND "createdAt" >= ${since} AND "detail" ? 'rules' AND "toolCallId" IS NOT NULL
      AND (${before}::bigint IS NULL OR "id" < ${before}::bigint)
    ORDER BY "id" DESC LIMIT ${limit}`;
}

export interface ReplayRow {
  id: string;
  tenantId: string;
  text: string;
  days: number;
  limit: number;
  status: "queued" | "running" | "done" | "failed";
  read: number;
  more: boolean;
  cursor: bigint | null;
  report: Record<string, unknown> | null;
  error: string | null;
}

const REPLAY_COLUMNS = Prisma.sql`"id", "tenantId", "text", "days", "limit", "status", "read", "more", "cursor", "report", "error"`;

// Any constant no other advisory lock in the project uses: with the tenant's hash, one of its replays queued at a time.
const REPLAY_QUEUE_LOCK = 7_100_117;

// A replay running stores its progress after every page of decisions, so one untouched for a minute was left by an
// instance that stopped: it counts against no cap, and the job takes it up again from its last pause.
const ABANDONED = Prisma.sql`"status" = 'running' AND "updatedAt" <= now() - interval '1 minute'`;

/**
 * Queues a replay unless the tenant already has `perTenant` waiting or running; false when refused, nothing written.
 * The tenant's lock, held to the commit, makes the count and the insert one step, so two requests cannot both take
 * the last place. An abandoned replay counts no more.
 */
export async function insertReplayUnderCap(
  tx: Tx,
  row: { id: string; tenantId: string; text: string; days: number; limit: number; createdById: string },
  perTenant: number,
): Promise<boolean> {
  await tx.$queryRaw`SELECT pg_advisory_xact_lock(${REPLAY_QUEUE_LOCK}::int, hashtext(${row.tenantId})) IS NULL AS "locked"`;
  const inserted = await tx.$executeRaw`
    INSERT INTO "RuleReplay" ("id", "tenantId", "text", "days", "limit", "createdById")
    SELECT ${row.id}, ${row.tenantId}, ${row.text}, ${row.days}, ${row.limit}, ${row.createdById}
    WHERE (SELECT count(*) FROM "RuleReplay"
           WHERE "tenantId" = ${row.tenantId}
             AND ("status" IN ('queued', 'running') AND NOT (${ABANDONED}))) < ${perTenant}`;
  return inserted > 0;
}

/**
 * Claims the oldest queued or abandoned replay (skipping one another instance holds) and marks it running; null when
 * none waits. An abandoned replay goes on from its last pause, its progress since then read again.
 */
export async function claimReplay(db: Db): Promise<ReplayRow | null> {
  const [row] = await db.$queryRaw<ReplayRow[]>`
    UPDATE "RuleReplay" SET "status" = 'running', "updatedAt" = now()
    WHERE "id" = (SELECT "id" FROM "RuleReplay" WHERE "status" = 'queued' OR (${ABANDONED})
                  ORDER BY "createdAt" LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING ${REPLAY_COLUMNS}`;
  return row ?? null;
}

/**
 * A running replay's progress; a pause (queued again with where it stopped and its report so far, for the job's
 * next run); or its end: done with its report, or failed with the reason.
 */
export async function updateReplay(
  db: Db,
  id: string,
  state: { read: number } & (
    | { status: "running" }
    | { status: "queued"; cursor: bigint; report: unknown }
    | { status: "done"; more: boolean; report: unknown }
    | { status: "failed"; error: string }
  ),
): Promise<void> {
  const report = state.status === "done" || state.status === "queued" ? JSON.stringify(state.report) : null;
  const keepReport = state.status === "running";
  await db.$executeRaw`
    UPDATE "RuleReplay" SET "status" = ${state.status}, "read" = ${state.read},
      "more" = ${state.status === "done" && state.more},
      "cursor" = CASE WHEN ${keepReport} THEN "cursor" ELSE ${state.status === "queued" ? state.cursor : null}::bigint END,
      "report" = CASE WHEN ${keepReport} THEN "report" ELSE ${report}::jsonb END,
      "error" = ${state.status === "failed" ? state.error : null}, "updatedAt" = now()
    WHERE "id" = ${id}`;
}

/** One of the tenant's replays; null for a missing or foreign id. */
export async function findReplay(db: Db, tenantId: string, id: string): Promise<ReplayRow | null> {
  const [row] = await db.$queryRaw<ReplayRow[]>`
    SELECT ${REPLAY_COLUMNS} FROM "RuleReplay" WHERE "id" = ${id} AND "tenantId" = ${tenantId}`;
  return row ?? null;
}

/** The tenant's rule sets in force. */
export async function findTenantRuleSets(
  db: Db,
  tenantId: string,
): Promise<{ liveRuleSetId: string | null; shadowRuleSetId: string | null }> {
  const [row] = await db.$queryRaw<{ liveRuleSetId: string | null; shadowRuleSetId: string | null }[]>`
    SELECT "liveRuleSetId", "shadowRuleSetId" FROM "Tenant" WHERE "id" = ${tenantId}`;
  return row;
}

/** A replay of a waiting rules change as kept for its review: the report, or why the rules cannot be replayed. */
export interface StoredReviewReplay {
  report: DifferenceReport | null;
  errors: string[];
}

/**
 * The tenant's live rule set and the change's kept replay when it was made while that set was live, within the last
 * hour; `stored` is null when there is none, the live set changed since, or it is older (a change waits up to 30 days,
 * and its review shows the days up to now).
 */
export async function findReviewReplay(
  db: Db,
  tenantId: string,
  changeId: string,
): Promise<{ liveRuleSetId: string | null; stored: StoredReviewReplay | null }> {
  const [row] = await db.$queryRaw<
    { liveRuleSetId: string | null; kept: boolean; report: DifferenceReport | null; errors: string[] | null }[]
  >`
    SELECT t."liveRuleSetId", s."changeId" IS NOT NULL AS "kept", s."report", s."errors"
    FROM "Tenant" t
    LEFT JOIN "RuleChangeReplay" s
      ON s."changeId" = ${changeId} AND s."liveRuleSetId" IS NOT DISTINCT FROM t."liveRuleSetId"
        AND s."replayedAt" > now() - interval '1 hour'
    WHERE t."id" = ${tenantId}`;
  return {
    liveRuleSetId: row.liveRuleSetId,
    stored: row.kept ? { report: row.report, errors: row.errors ?? [] } : null,
  };
}

/**
 * Keeps the change's replay made while `liveRuleSetId` was live, in place of one made against another set; only
 * while the change still waits. Its row is share-locked, so a decision under way (which deletes the change's replay
 * when it closes it) is waited for and then seen.
 */
export async function storeReviewReplay(
  db: Db,
  row: { changeId: string; liveRuleSetId: string | null } & StoredReviewReplay,
): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "RuleChangeReplay" ("changeId", "liveRuleSetId", "report", "errors")
    SELECT c."id", ${row.liveRuleSetId}, ${row.report === null ? null : JSON.stringify(row.report)}::jsonb,
      ${row.errors}::text[]
    FROM "AdminChange" c WHERE c."id" = ${row.changeId} AND c."status" = 'pending'
    FOR SHARE
    ON CONFLICT ("changeId") DO UPDATE SET "liveRuleSetId" = EXCLUDED."liveRuleSetId", "report" = EXCLUDED."report",
      "errors" = EXCLUDED."errors", "replayedAt" = now()`;
}

/** The tenant's time zone and live rule text, the tenant row locked until the transaction ends. */
export async function lockTimeZone(tx: Tx, tenantId: string): Promise<{ timeZone: string; liveText: string | null }> {
  const [row] = await tx.$queryRaw<{ timeZone: string; liveText: string | null }[]>`
    SELECT t."timeZone", r."text" AS "liveText"
    FROM "Tenant" t LEFT JOIN "PolicyRuleSet" r ON r."id" = t."liveRuleSetId"
    WHERE t."id" = ${tenantId} FOR UPDATE OF t`;
  return row;
}

/** Whether the database knows this IANA zone name (the facts statement reads the time in it). */
export async function knowsTimeZone(db: Db, timeZone: string): Promise<boolean> {
  const [row] = await db.$queryRaw<{ known: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE "name" = ${timeZone}) AS "known"`;
  return row.known;
}

export async function setTimeZone(db: Db, tenantId: string, timeZone: string): Promise<void> {
  await db.$executeRaw`UPDATE "Tenant" SET "timeZone" = ${timeZone} WHERE "id" = ${tenantId}`;
}

/** The tenant's time zone. */
export async function findTimeZone(db: Db, tenantId: string): Promise<string> {
  const [row] = await db.$queryRaw<{ timeZone: string }[]>`SELECT "timeZone" FROM "Tenant" WHERE "id" = ${tenantId}`;
  return row.timeZone;
}
