-- Issue 38: a rule set version keeps its test cases beside its text, the change that made it (the waiting change and
-- the admin who approved it) and the version it restores when it is a rollback; the tenant's time zone is what the
-- rules' time of day reads.

-- AlterTable
ALTER TABLE "PolicyRuleSet" ADD COLUMN "cases" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN "changeId" TEXT,
ADD COLUMN "approvedById" TEXT,
ADD COLUMN "restoresVersion" INTEGER;

-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN "timeZone" TEXT NOT NULL DEFAULT 'UTC';

-- A replay of a candidate rule set over recorded decisions, run by the instance's job runner off the request path:
-- its progress (`read`) is visible while it runs, and it says when more decisions remain beyond its `limit`.
-- CreateTable
CREATE TABLE "RuleReplay" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "days" INTEGER NOT NULL,
    "limit" INTEGER NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "read" INTEGER NOT NULL DEFAULT 0,
    "more" BOOLEAN NOT NULL DEFAULT false,
    "cursor" BIGINT,
    "report" JSONB,
    "error" TEXT,
    "createdById" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RuleReplay_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "RuleReplay_status_createdAt_idx" ON "RuleReplay"("status", "createdAt");

-- AddForeignKey
ALTER TABLE "RuleReplay" ADD CONSTRAINT "RuleReplay_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
