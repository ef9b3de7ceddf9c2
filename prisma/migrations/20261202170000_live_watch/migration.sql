-- Open live views, so that a call's record NOTIFYs only conversations someone is watching. PostgreSQL takes one
-- cluster-wide lock from a notifying transaction's pre-commit until after its commit record is flushed, so
-- notifying on every call serialized every call's commit (docs/BENCHMARKS.md, durable commits).

-- CreateTable
CREATE TABLE "LiveWatch" (
    "id" TEXT NOT NULL,
    "conversationId" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "LiveWatch_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "LiveWatch_conversationId_expiresAt_idx" ON "LiveWatch"("conversationId", "expiresAt");

-- AddForeignKey
ALTER TABLE "LiveWatch" ADD CONSTRAINT "LiveWatch_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "Conversation"("id") ON DELETE CASCADE ON UPDATE CASCADE;
