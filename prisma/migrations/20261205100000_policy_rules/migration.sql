-- Policy rules in Cedar (docs/decisions/019): a tenant's rule sets, each version kept with who published it, when,
-- and whether as live (enforced) or shadow (evaluated and recorded beside the live one, never enforced). The tenant
-- points at the version in force for each; no pointer means no rules, decided by the numbers alone. Two facts the
-- rules read: a customer on fraud watch, and when an order was placed.

-- AlterTable
ALTER TABLE "Customer" ADD COLUMN "fraudWatch" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "Order" ADD COLUMN "placedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN "liveRuleSetId" TEXT,
ADD COLUMN "shadowRuleSetId" TEXT;

-- CreateTable
CREATE TABLE "PolicyRuleSet" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "createdById" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PolicyRuleSet_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "PolicyRuleSet_tenantId_version_key" ON "PolicyRuleSet"("tenantId", "version");

-- AddForeignKey
ALTER TABLE "PolicyRuleSet" ADD CONSTRAINT "PolicyRuleSet_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- CreateIndex: a rule may read the agent's refunds since midnight (stage 5 counts them for each refund).
CREATE INDEX "Refund_tenantId_createdAt_idx" ON "Refund"("tenantId", "createdAt");
