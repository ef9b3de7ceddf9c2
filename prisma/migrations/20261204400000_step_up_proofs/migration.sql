-- Step-up proofs bound to a purpose and a session (decision 014). A proof is made by one ceremony (a passkey
-- assertion over a challenge derived from a random nonce and the purpose's digest, or the password typed again)
-- for one purpose: the approval requests and amounts it covers, a passkey enrolment or removal, an investigation
-- release, an admin change. It counts only from the session that made it, only briefly, and each item it covers
-- is consumed once, inside the transaction that does the thing. It replaces the proof kept on the person.

-- CreateTable
CREATE TABLE "StepUpProof" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "items" TEXT[],
    "purposeDigest" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "challenge" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "provedAt" TIMESTAMPTZ(3),
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "usedFor" TEXT[] DEFAULT ARRAY[]::TEXT[],

    CONSTRAINT "StepUpProof_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "StepUpProof_userId_createdAt_idx" ON "StepUpProof"("userId", "createdAt");

-- CreateIndex
CREATE INDEX "StepUpProof_sessionId_idx" ON "StepUpProof"("sessionId");

-- AddForeignKey
ALTER TABLE "StepUpProof" ADD CONSTRAINT "StepUpProof_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "StepUpProof" ADD CONSTRAINT "StepUpProof_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The proof on the person (decision 008) is gone: nothing reads it any more.
ALTER TABLE "User" DROP COLUMN "stepUpAt", DROP COLUMN "stepUpMethod";
