-- The two-person rule applies to an irreversible call *above* `twoPersonAboveCents`. Its default, 100000, equals
-- the largest refund one call may ask (issue_refund's amount_cents max), so by default the rule never applied.
-- The default becomes 50000 (500.00 USD): a refund above it needs two different supervisors. Tenants still on
-- the old default had a rule that could never apply, so they get the new one; any other value an admin chose stays.

-- AlterTable
ALTER TABLE "Tenant" ALTER COLUMN "twoPersonAboveCents" SET DEFAULT 50000;

UPDATE "Tenant" SET "twoPersonAboveCents" = 50000 WHERE "twoPersonAboveCents" = 100000;
