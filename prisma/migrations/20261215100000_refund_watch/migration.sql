-- A refund released after the provider's not-found is looked up again until the provider forgets its key: a request
-- still on its way when the lookup answered may reach the provider later and be paid. Released refunds not watched
-- (the provider's own refusal, or anything released before this column) keep it null.
ALTER TABLE "Refund" ADD COLUMN "watchUntil" TIMESTAMPTZ(3);

CREATE INDEX "Refund_watched_idx" ON "Refund"("nextCheckAt") WHERE "watchUntil" IS NOT NULL;
