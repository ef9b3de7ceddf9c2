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
