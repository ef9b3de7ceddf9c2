-- Reconciliation that one instance at a time works on a refund (it claims it until "nextCheckAt"), backs off per
-- refund, re-sends only within the provider's key retention, and leaves investigations to a supervisor's decision
-- (docs/SPEC.md, section 9).

-- AlterTable
ALTER TABLE "Refund" ADD COLUMN "nextCheckAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN "checks" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "resentAt" TIMESTAMPTZ(3),
ADD COLUMN "resolvedById" TEXT;

-- CreateIndex
CREATE INDEX "Refund_status_nextCheckAt_idx" ON "Refund"("status", "nextCheckAt");

-- CreateTable
CREATE TABLE "ReconcileStatus" (
    "id" TEXT NOT NULL,
    "ok" BOOLEAN NOT NULL,
    "reason" TEXT,
    "checkedAt" TIMESTAMPTZ(3) NOT NULL,
    "lastOkAt" TIMESTAMPTZ(3),

    CONSTRAINT "ReconcileStatus_pkey" PRIMARY KEY ("id")
);
