-- Exposure as running totals (docs/decisions/021): one row per tenant and one per agent holds everything ever
-- counted toward its ceiling, and each exposure row carries the tenant's and the agent's running total after it, so a
-- rolling 24-hour sum is the running total now less the running total at the window's edge: a fixed number of rows
-- whatever the tenant's volume, exact to the row at both edges.

-- AlterTable
ALTER TABLE "AutoExposure" ADD COLUMN "tenantRunningCents" BIGINT,
    ADD COLUMN "agentRunningCents" BIGINT;

-- The rows already counted, numbered in the order they were made.
UPDATE "AutoExposure" e SET "tenantRunningCents" = r."tenant", "agentRunningCents" = r."agent"
FROM (
    SELECT "id",
           SUM("amountCents") OVER (PARTITION BY "tenantId" ORDER BY "createdAt", "id") AS "tenant",
           SUM("amountCents") OVER (PARTITION BY "tenantId", "agentId" ORDER BY "createdAt", "id") AS "agent"
    FROM "AutoExposure"
) r
WHERE e."id" = r."id";

ALTER TABLE "AutoExposure" ALTER COLUMN "tenantRunningCents" SET NOT NULL,
    ALTER COLUMN "agentRunningCents" SET NOT NULL;

-- "agentId" is '' on the tenant's own row. "runningCents" is everything ever reserved; "baseCents" the running total
-- of the last exposure row the prune job dropped (the edge when no older row is left); "lastAt" never goes back, so
-- exposure rows of one tenant are in running order by time.
-- CreateTable
CREATE TABLE "ExposureTotal" (
    "tenantId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "runningCents" BIGINT NOT NULL,
    "baseCents" BIGINT NOT NULL DEFAULT 0,
    "lastAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ExposureTotal_pkey" PRIMARY KEY ("tenantId","agentId"),
    CONSTRAINT "ExposureTotal_running_check" CHECK ("runningCents" >= "baseCents" AND "baseCents" >= 0)
);

INSERT INTO "ExposureTotal" ("tenantId", "agentId", "runningCents", "lastAt")
SELECT "tenantId", '', MAX("tenantRunningCents"), MAX("createdAt") FROM "AutoExposure" GROUP BY "tenantId"
UNION ALL
SELECT "tenantId", "agentId", MAX("agentRunningCents"), MAX("createdAt") FROM "AutoExposure" GROUP BY "tenantId", "agentId";

-- The edge lookups: the last row at or before the edge, one index entry each.
-- DropIndex
DROP INDEX "AutoExposure_tenantId_createdAt_idx";

-- CreateIndex
CREATE INDEX "AutoExposure_tenantId_createdAt_tenantRunningCents_idx" ON "AutoExposure"("tenantId", "createdAt", "tenantRunningCents");

-- CreateIndex
CREATE INDEX "AutoExposure_tenantId_agentId_createdAt_agentRunningCents_idx" ON "AutoExposure"("tenantId", "agentId", "createdAt", "agentRunningCents");
