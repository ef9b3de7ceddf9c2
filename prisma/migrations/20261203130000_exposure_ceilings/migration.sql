-- Exposure ceilings across conversations: per agent and per tenant, the irreversible impact executed without an
-- approval in any rolling 24 hours; and a per-key limit on opening conversations (SPEC section 1).

-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN "agentDailyCeilingCents" INTEGER NOT NULL DEFAULT 25000,
    ADD COLUMN "tenantDailyCeilingCents" INTEGER NOT NULL DEFAULT 100000,
    ADD COLUMN "rateOpenPerMin" INTEGER NOT NULL DEFAULT 30,
    ADD CONSTRAINT "Tenant_exposure_check" CHECK (
        "agentDailyCeilingCents" >= 0 AND "tenantDailyCeilingCents" >= 0 AND "rateOpenPerMin" > 0
    );

-- One row per irreversible effect executed without an approval, written in the effect's own transaction; the
-- rolling sums are read from here under the tenant row's lock (lib/gateway/policy.ts).
-- CreateTable
CREATE TABLE "AutoExposure" (
    "id" BIGSERIAL NOT NULL,
    "tenantId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "toolCallId" TEXT NOT NULL,
    "amountCents" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AutoExposure_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "AutoExposure_amount_check" CHECK ("amountCents" > 0)
);

-- CreateIndex
CREATE INDEX "AutoExposure_tenantId_createdAt_idx" ON "AutoExposure"("tenantId", "createdAt");
