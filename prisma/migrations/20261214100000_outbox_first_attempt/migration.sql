-- A receiver's 429 defers a row without counting an attempt for a day from the row's first attempt, no longer from
-- its queuing: a row queued while the sender was down gets that day once it is tried. Rows still waiting that were
-- already tried keep the day they had, measured from their queuing; sent and dead rows are left as they are.
ALTER TABLE "OutboxMessage" ADD COLUMN "firstAttemptAt" TIMESTAMPTZ(3);

UPDATE "OutboxMessage" SET "firstAttemptAt" = "createdAt"
WHERE "status" IN ('pending', 'sending') AND ("attempts" > 0 OR "lastError" IS NOT NULL);
