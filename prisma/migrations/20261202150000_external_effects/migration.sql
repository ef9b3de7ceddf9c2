-- Refunds now leave the host: a reservation is recorded first, then settled from the provider's answer.
ALTER TABLE "Refund" ADD COLUMN "providerRefundId" TEXT,
    ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "lastError" TEXT,
    ADD COLUMN "settledAt" TIMESTAMPTZ(3),
    ADD COLUMN "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

ALTER TABLE "Refund" ADD CONSTRAINT "Refund_status_check"
    CHECK ("status" IN ('reserved', 'issued', 'released', 'unknown', 'investigate'));

-- CreateIndex
CREATE INDEX "Refund_status_updatedAt_idx" ON "Refund"("status", "updatedAt");

-- Outbox delivery: retries with backoff, a claim while a sender works on a row, and a dead-letter state.
ALTER TABLE "OutboxMessage" ADD COLUMN "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    ADD COLUMN "claimedAt" TIMESTAMPTZ(3),
    ADD COLUMN "lastError" TEXT;

ALTER TABLE "OutboxMessage" ADD CONSTRAINT "OutboxMessage_status_check"
    CHECK ("status" IN ('pending', 'sending', 'sent', 'dead'));

-- DropIndex
DROP INDEX "OutboxMessage_status_createdAt_idx";

-- CreateIndex
CREATE INDEX "OutboxMessage_status_nextAttemptAt_idx" ON "OutboxMessage"("status", "nextAttemptAt");

-- Per-tenant webhook for new approval requests, signed with the tenant's secret.
ALTER TABLE "Tenant" ADD COLUMN "webhookUrl" TEXT,
    ADD COLUMN "webhookSecret" TEXT;
