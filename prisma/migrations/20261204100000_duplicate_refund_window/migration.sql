-- The duplicate-intent guard's window: a refund proposal that matches a refund issued, unknown or in progress on
-- the same order within this many hours is held for a supervisor as a possible duplicate.

-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN "duplicateWindowHours" INTEGER NOT NULL DEFAULT 24;
