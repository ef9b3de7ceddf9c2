-- The approval desk: step-up and two-person thresholds, the expiry warning, narrowing edits, the second
-- approver, how each approver proved it, passkeys, and the decision detail the log keeps for a decision.

-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN "stepUpAboveCents" INTEGER NOT NULL DEFAULT 10000,
ADD COLUMN "twoPersonAboveCents" INTEGER NOT NULL DEFAULT 100000,
ADD COLUMN "expiryWarningSeconds" INTEGER NOT NULL DEFAULT 300;

-- AlterTable
ALTER TABLE "User" ADD COLUMN "stepUpAt" TIMESTAMPTZ(3),
ADD COLUMN "stepUpMethod" TEXT,
ADD COLUMN "webauthnChallenge" TEXT,
ADD COLUMN "webauthnChallengeAt" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "ApprovalRequest" ADD COLUMN "approvedArgs" JSONB,
ADD COLUMN "stepUpMethod" TEXT,
ADD COLUMN "firstApproverId" TEXT,
ADD COLUMN "firstApprovedAt" TIMESTAMPTZ(3),
ADD COLUMN "firstApprovedArgs" JSONB,
ADD COLUMN "firstStepUpMethod" TEXT,
ADD COLUMN "expiryNotifiedAt" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "DecisionLog" ADD COLUMN "detail" JSONB;

-- CreateTable
CREATE TABLE "Passkey" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "publicKey" BYTEA NOT NULL,
    "counter" INTEGER NOT NULL DEFAULT 0,
    "transports" TEXT[],
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMPTZ(3),

    CONSTRAINT "Passkey_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Passkey_userId_idx" ON "Passkey"("userId");

-- AddForeignKey
ALTER TABLE "Passkey" ADD CONSTRAINT "Passkey_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
