-- The replay a waiting rules change shows the admin who decides it, kept: made once while the tenant's live rule set
-- is `liveRuleSetId` (null: no live rules) and read by every instance until that set changes, where each load of the
-- admin page and the Approvals page replayed up to 10,000 recorded decisions.

-- CreateTable
CREATE TABLE "RuleChangeReplay" (
    "changeId" TEXT NOT NULL,
    "liveRuleSetId" TEXT,
    "report" JSONB,
    "errors" TEXT[],
    "replayedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RuleChangeReplay_pkey" PRIMARY KEY ("changeId")
);

-- AddForeignKey
ALTER TABLE "RuleChangeReplay" ADD CONSTRAINT "RuleChangeReplay_changeId_fkey" FOREIGN KEY ("changeId") REFERENCES "AdminChange"("id") ON DELETE CASCADE ON UPDATE CASCADE;
