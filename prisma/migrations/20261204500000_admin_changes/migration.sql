-- The two-admin rule (docs/decisions/015): a change that loosens control beyond the tenant's bound waits as an
-- argument-bound, single-use, expiring request that a different admin approves, or, in a tenant with one admin,
-- applies after a delay during which any supervisor or admin may cancel it. The bound and the delay are policy
-- numbers themselves, so loosening them goes through the same rule.

-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN "secondAdminAboveCents" INTEGER NOT NULL DEFAULT 10000,
ADD COLUMN "changeDelaySeconds" INTEGER NOT NULL DEFAULT 86400;

-- AlterTable: a key minted by a change that still waits is not usable until the change applies.
ALTER TABLE "ApiKey" ADD COLUMN "pendingChangeId" TEXT;

-- CreateTable
CREATE TABLE "AdminChange" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "change" JSONB NOT NULL,
    "base" JSONB NOT NULL,
    "digest" TEXT NOT NULL,
    "proposedById" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "applyAt" TIMESTAMPTZ(3),
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "decidedById" TEXT,
    "decidedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AdminChange_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AdminChange_tenantId_status_createdAt_idx" ON "AdminChange"("tenantId", "status", "createdAt");

-- CreateIndex
CREATE INDEX "AdminChange_status_applyAt_idx" ON "AdminChange"("status", "applyAt");

-- AddForeignKey
ALTER TABLE "AdminChange" ADD CONSTRAINT "AdminChange_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
