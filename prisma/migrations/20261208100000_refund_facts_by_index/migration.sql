-- Issue 37: the rules' facts of a refund read one index range each, whatever the tenant's volume
-- (docs/decisions/027). A refund keeps the agent of its call's conversation and the order's customer; the duplicate
-- guard reads an order's refunds within its window by (orderId, createdAt).

-- AlterTable
ALTER TABLE "Refund" ADD COLUMN "agentId" TEXT,
ADD COLUMN "customerId" TEXT;

-- Refunds reserved before this migration: the same values, from the call's conversation and the order.
UPDATE "Refund" r SET "agentId" = c."agentId", "customerId" = o."customerId"
FROM "ToolCall" t, "Conversation" c, "Order" o
WHERE t."id" = r."toolCallId" AND c."id" = t."conversationId" AND o."id" = r."orderId";

-- DropIndex
DROP INDEX "Refund_orderId_idx";

-- CreateIndex
CREATE INDEX "Refund_orderId_createdAt_idx" ON "Refund"("orderId", "createdAt");

-- CreateIndex
CREATE INDEX "Refund_tenantId_agentId_createdAt_idx" ON "Refund"("tenantId", "agentId", "createdAt");

-- CreateIndex
CREATE INDEX "Refund_tenantId_customerId_createdAt_idx" ON "Refund"("tenantId", "customerId", "createdAt");
