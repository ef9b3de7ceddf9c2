import type { Db } from "../../db";
import { Prisma } from "../../generated/prisma/client";

/** A reservation against both ceilings: the running totals it left and the time it holds its place in them. */
export interface ExposureReservation {
  cents: number;
  at: Date;
  tenantRunningCents: number;
  agentRunningCents: number;
}

/**
 * The exposure an irreversible call executed without a person runs under: a reservation made before the effect (when
 * rules are judged again under its locks), or `reserveCents` for the effect's own statement to reserve first.
 */
export type Exposure = ExposureReservation | { reserveCents: number };

// The running total at the 24-hour edge: that of the last exposure row at or before it, else what the prune job
// dropped (`baseCents`). Rows that old committed long before any statement that reads them (docs/decisions/021).
const tenantEdge = (tenantId: string) => Prisma.sql`COALESCE((
      SELECT e."tenantRunningCents" FROM "AutoExposure" e
      WHERE e."tenantId" = ${tenantId} AND e."createdAt" <= now() - interval '24 hours'
      ORDER BY e."createdAt" DESC, e."tenantRunningCents" DESC LIMIT 1), x."baseCents")`;
const agentEdge = (tenantId: string, agentId: string) => Prisma.sql`COALESCE((
      SELECT e."agentRunningCents" FROM "AutoExposure" e
      WHERE e."tenantId" = ${tenantId} AND e."agentId" = ${agentId} AND e."createdAt" <= now() - interval '24 hours'
      ORDER BY e."createdAt" DESC, e."agentRunningCents" DESC LIMIT 1), x."baseCents")`;

/**
 * The reservation's statements, for a `WITH`: `tenant` reserves `cents` against the tenant's rolling 24-hour ceiling
 * and then `agent` against the agent's, each by a conditional upsert of its running total that PostgreSQL re-checks
 * on the row's latest version once it holds the row's lock: the row locks are the ceilings' serialization, from here
 * to the commit. `tenant` returns no row when the tenant's ceiling refuses (nothing reserved), `agent` none when the
 * agent's does (the tenant's part is reserved: give it back). Run alone (`reserveExposure`) or inside the effect's own
 * statement (`moveOrderWithEffect`).
 */
export function reservationCtes(at: { tenantId: string; agentId: string; cents: number }): Prisma.Sql {
  const { tenantId, agentId, cents } = at;
  return Prisma.sql`ceilings AS (
      SELECT "agentDailyCeilingCents" AS "agent", "tenantDailyCeilingCents" AS "tenant" FROM "Tenant" WHERE "id" = ${tenantId}
    ), tenant AS (
      INSERT INTO "ExposureTotal" AS x ("tenantId", "agentId", "runningCents", "lastAt")
      SELECT ${tenantId}, '', ${cents}::bigint, clock_timestamp() FROM ceilings WHERE ${cents}::bigint <= ceilings."tenant"
      ON CONFLICT ("tenantId", "agentId") DO UPDATE
        SET "runningCents" = x."runningCents" + EXCLUDED."runningCents", "lastAt" = GREATEST(x."lastAt", EXCLUDED."lastAt")
        WHERE x."runningCents" + EXCLUDED."runningCents" - ${tenantEdge(tenantId)} <= (SELECT "tenant" FROM ceilings)
      RETURNING x."runningCents", x."lastAt"
    ), agent AS (
      INSERT INTO "ExposureTotal" AS x ("tenantId", "agentId", "runningCents", "lastAt")
      SELECT ${tenantId}, ${agentId}, ${cents}::bigint, tenant."lastAt" FROM tenant, ceilings WHERE ${cents}::bigint <= ceilings."agent"
      ON CONFLICT ("tenantId", "agentId") DO UPDATE
        SET "runningCents" = x."runningCents" + EXCLUDED."runningCents", "lastAt" = EXCLUDED."lastAt"
        WHERE x."runningCents" + EXCLUDED."runningCents" - ${agentEdge(tenantId, agentId)} <= (SELECT "agent" FROM ceilings)
      RETURNING x."runningCents"
    )`;
}

/**
 * Reserves `cents` against both ceilings in a statement of its own (`reservationCtes`). Null when the tenant's
 * ceiling refuses (nothing reserved); `agentRunningCents` null when only the agent's does (the tenant's part is
 * reserved: release it).
 */
export async function reserveExposure(
  db: Db,
  at: { tenantId: string; agentId: string; cents: number },
): Promise<{ at: Date; tenantRunningCents: number; agentRunningCents: number | null } | null> {
  const [reserved] = await db.$queryRaw<{ at: Date; tenantRunningCents: number; agentRunningCents: number | null }[]>`
    WITH ${reservationCtes(at)}
    SELECT tenant."lastAt" AS "at", tenant."runningCents"::float8 AS "tenantRunningCents",
           agent."runningCents"::float8 AS "agentRunningCents"
    FROM tenant LEFT JOIN agent ON true`;
  return reserved ?? null;
}

/** Gives back a reservation that made no exposure row (the transaction still holds the rows' locks). */
export async function releaseExposure(
  db: Db,
  at: { tenantId: string; agentId: string | null; cents: number },
): Promise<void> {
  await db.$executeRaw`
    UPDATE "ExposureTotal" SET "runningCents" = "runningCents" - ${at.cents}::bigint
    WHERE "tenantId" = ${at.tenantId} AND "agentId" IN ('', ${at.agentId ?? ""})`;
}

/** The tenant's ceilings and the agent's and tenant's automatic exposure of the last 24 hours, in cents. */
export async function readExposure(
  db: Db,
  at: { tenantId: string; agentId: string },
): Promise<{ agentCeilingCents: number; tenantCeilingCents: number; agent: number; tenant: number }> {
  const [row] = await db.$queryRaw<
    { agentCeilingCents: number; tenantCeilingCents: number; agent: number; tenant: number }[]
  >`
    SELECT t."agentDailyCeilingCents" AS "agentCeilingCents", t."tenantDailyCeilingCents" AS "tenantCeilingCents",
           COALESCE((SELECT x."runningCents" - ${agentEdge(at.tenantId, at.agentId)} FROM "ExposureTotal" x
                     WHERE x."tenantId" = t."id" AND x."agentId" = ${at.agentId}), 0)::float8 AS "agent",
           COALESCE((SELECT x."runningCents" - ${tenantEdge(at.tenantId)} FROM "ExposureTotal" x
                     WHERE x."tenantId" = t."id" AND x."agentId" = ''), 0)::float8 AS "tenant"
    FROM "Tenant" t WHERE t."id" = ${at.tenantId}`;
  return row;
}

/**
 * Deletes the exposure rows older than 25 hours and keeps, on each running total they belonged to, the running total
 * of the last one dropped: the edge of a window no row of which is left. Returns how many rows went. The totals are
 * locked in key order (the tenant's own row first), as a reservation locks them.
 */
export async function deleteOldAutoExposure(db: Db): Promise<number> {
  const [gone] = await db.$queryRaw<{ count: number }[]>`
    WITH gone AS (
      DELETE FROM "AutoExposure" WHERE "createdAt" < now() - interval '25 hours'
      RETURNING "tenantId", "agentId", "tenantRunningCents", "agentRunningCents"
    ), bases AS (
      SELECT "tenantId", '' AS "agentId", MAX("tenantRunningCents") AS "base" FROM gone GROUP BY "tenantId"
      UNION ALL
      SELECT "tenantId", "agentId", MAX("agentRunningCents") FROM gone GROUP BY "tenantId", "agentId"
    ), locked AS (
      SELECT x."tenantId", x."agentId", b."base" FROM "ExposureTotal" x JOIN bases b USING ("tenantId", "agentId")
      ORDER BY x."tenantId", x."agentId" FOR UPDATE OF x
    ), based AS (
      UPDATE "ExposureTotal" x SET "baseCents" = GREATEST(x."baseCents", l."base") FROM locked l
      WHERE x."tenantId" = l."tenantId" AND x."agentId" = l."agentId"
    )
    SELECT count(*)::int AS "count" FROM gone`;
  return gone.count;
}

/**
 * What the policy rules read beyond the order's facts: the customer's flag, age and refunds of the last 7 days, the
 * order's age, the agent's refunds today, role, age and automatic exposure, and the time in the tenant's zone.
 */
export interface RuleFactsRow {
  fraudWatch: boolean;
  customerAgeDays: number;
  orderAgeDays: number;
  agentRefundsToday: number;
  agentRole: string;
  agentAgeDays: number;
  agentExposureCents: number;
  customerRefunds7d: number;
  customerRefundedCents7d: number;
  localHour: number;
  localWeekday: number;
}

/** The agent's refunds today are counted up to this many: a busy tenant's day is never scanned whole for one call. */
export const REFUNDS_TODAY_CAP = 100;

/**
 * The customer's refunds of the last 7 days, capped like the agent's refunds today, as the lateral `c7` (`count`,
 * `cents`): one range of the refunds' (tenant, customer, time) index (docs/decisions/027).
 */
export const customerRefunds7d = (tenantId: string) => Prisma.sql`LEFT JOIN LATERAL (
             SELECT count(*)::int AS "count", COALESCE(sum(recent."amountCents"), 0)::float8 AS "cents" FROM (
               SELECT r."amountCents" FROM "Refund" r
               WHERE r."tenantId" = ${tenantId} AND r."customerId" = cu."id" AND r."createdAt" >= now() - interval '7 days'
               LIMIT ${REFUNDS_TODAY_CAP}
             ) recent) c7 ON true`;

/**
 * The columns of a `RuleFactsRow`, on the order `o`, its customer `cu` and the lateral `customerRefunds7d` (`c7`):
 * scalar subqueries of the one statement that loads the call's order, so the richer facts cost no round trip.
 */
export function ruleFactsColumns(at: { tenantId: string; agentId: string; countRefunds: boolean }): Prisma.Sql {
  return Prisma.sql`cu."fraudWatch",
           (SELECT a."role"::text FROM "User" a WHERE a."id" = ${at.agentId}) AS "agentRole",
           (SELECT floor(extract(epoch FROM now() - a."createdAt") / 86400)::int FROM "User" a
             WHERE a."id" = ${at.agentId}) AS "agentAgeDays",
           COALESCE((SELECT x."runningCents" - ${agentEdge(at.tenantId, at.agentId)} FROM "ExposureTotal" x
             WHERE x."tenantId" = ${at.tenantId} AND x."agentId" = ${at.agentId}), 0)::float8 AS "agentExposureCents",
           c7."count" AS "customerRefunds7d",
           c7."cents" AS "customerRefundedCents7d",
           (SELECT extract(hour FROM now() AT TIME ZONE t."timeZone")::int FROM "Tenant" t
             WHERE t."id" = ${at.tenantId}) AS "localHour",
           (SELECT extract(isodow FROM now() AT TIME ZONE t."timeZone")::int FROM "Tenant" t
             WHERE t."id" = ${at.tenantId}) AS "localWeekday",
           floor(extract(epoch FROM now() - cu."createdAt") / 86400)::int AS "customerAgeDays",
           floor(extract(epoch FROM now() - o."placedAt") / 86400)::int AS "orderAgeDays",
           CASE WHEN ${at.countRefunds} THEN (
             SELECT count(*)::int FROM (
               SELECT 1 FROM "Refund" r
               WHERE r."tenantId" = ${at.tenantId} AND r."agentId" = ${at.agentId}
                 AND r."createdAt" >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
               LIMIT ${REFUNDS_TODAY_CAP}
             ) today
           ) ELSE 0 END AS "agentRefundsToday"`;
}

/**
 * The rules' facts of an order already loaded, read again in a statement of their own: one that starts after the
 * exposure reservation's locks are held sees every refund committed before them (docs/decisions/023).
 */
export async function findRuleFacts(
  db: Db,
  at: { orderId: string; tenantId: string; agentId: string; countRefunds: boolean },
): Promise<RuleFactsRow | null> {
  const [row] = await db.$queryRaw<RuleFactsRow[]>`
    SELECT ${ruleFactsColumns(at)}
    FROM "Order" o JOIN "Customer" cu ON cu."id" = o."customerId" ${customerRefunds7d(at.tenantId)}
    WHERE o."id" = ${at.orderId} AND o."tenantId" = ${at.tenantId}`;
  return row ?? null;
}

/** The text of a published rule set of the tenant (versions are never edited). */
export async function findRuleSetText(db: Db, tenantId: string, id: string): Promise<string | undefined> {
  const [row] = await db.$queryRaw<{ text: string }[]>`
    SELECT "text" FROM "PolicyRuleSet" WHERE "id" = ${id} AND "tenantId" = ${tenantId}`;
  return row?.text;
}
