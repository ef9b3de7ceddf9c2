-- A receiver's 429 defers a row without counting an attempt for a day from the row's first attempt, no longer from
-- its queuing: a row queued while the sender was down gets that day once it is tried. Rows already tried keep the
-- day they had, measured from their queuing.
ALTER TABLE "OutboxMessage" ADD COLUMN "firstAttemptAt" TIMESTAMPTZ(3);

UPDATE "OutboxMessage" SET "firstAttemptAt" = "createdAt" WHERE "attempts" > 0 OR "lastError" IS NOT NULL;
