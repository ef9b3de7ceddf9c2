import type { Db } from "../db";
import type { DatabaseGauges } from "../observe/metrics";

// The statements of this instance's operations: the gauges /api/metrics shows and the migrations /api/ready checks.

const UNKNOWN_REFUND = ["unknown", "investigate"];

/**
 * The database gauges as they are now: pending approvals and the oldest one's age, the outbox's queue, retries
 * and dead messages, the refunds whose outcome is unknown and the oldest one's age, the refunds that paid an order
 * past its total still open (decision 031), and whether the last
 * reconciliation reached the payment provider (1, also before any ran) or not (0).
 */
export async function readDatabaseGauges(db: Db): Promise<DatabaseGauges> {
  const [row] = await db.$queryRaw<DatabaseGauges[]>`
    SELECT a."approvalsPending", a."approvalsOldestSeconds", o."outboxPending", o."outboxRetried", o."outboxDead",
           r."refundsUnknown", r."refundsUnknownOldestSeconds", x."refundsOverpaidOpen", p."reconcileProviderReachable"
    FROM (SELECT count(*)::int AS "approvalsPending", COALESCE(EXTRACT(EPOCH FROM now() - min("createdAt")), 0)::float8 AS "approvalsOldestSeconds"
          FROM "ApprovalRequest" WHERE "status" = 'pending') a,
         (SELECT count(*) FILTER (WHERE "status" IN ('pending', 'sending'))::int AS "outboxPending",
                 count(*) FILTER (WHERE "status" IN ('pending', 'sending') AND "lastError" IS NOT NULL)::int AS "outboxRetried",
                 count(*) FILTER (WHERE "status" = 'dead')::int AS "outboxDead"
          FROM "OutboxMessage" WHERE "status" IN ('pending', 'sending', 'dead')) o,
         (SELECT count(*)::int AS "refundsUnknown", COALESCE(EXTRACT(EPOCH FROM now() - min("createdAt")), 0)::float8 AS "refundsUnknownOldestSeconds"
          FROM "Refund" WHERE "status" = ANY(${UNKNOWN_REFUND})) r,
         (SELECT count(*)::int AS "refundsOverpaidOpen" FROM "Refund" WHERE "overpaidAt" IS NOT NULL AND "overpaidClosedAt" IS NULL) x,
         (SELECT COALESCE((SELECT CASE WHEN "ok" THEN 1 ELSE 0 END FROM "ReconcileStatus" WHERE "id" = 'provider'), 1)::int AS "reconcileProviderReachable") p`;
  return row;
}

/** The names of the migrations applied to the database (finished, not rolled back). */
export async function findAppliedMigrations(db: Db): Promise<string[]> {
  const rows = await db.$queryRaw<
    { name: string }[]
  >`SELECT "migration_name" AS name FROM "_prisma_migrations" WHERE "finished_at" IS NOT NULL AND "rolled_back_at" IS NULL`;
  return rows.map((row) => row.name);
}
