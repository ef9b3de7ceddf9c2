-- A tamper-evident decision log, sealed off the hot path (lib/audit/seal.ts). Each row records the id of the
-- transaction that appended it; a seal covers every row of one tenant whose transaction id lies in
-- [fromTxid, toTxid), where toTxid is a horizon below which every transaction had finished when the seal was made,
-- so a row committed late is never skipped. Appends stay a plain INSERT and never wait for each other.

-- AlterTable (existing rows get the migration's own transaction id and go into the first seals)
ALTER TABLE "DecisionLog" ADD COLUMN "txid" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint;

-- CreateIndex
CREATE INDEX "DecisionLog_txid_idx" ON "DecisionLog"("txid");

-- CreateTable
CREATE TABLE "DecisionSeal" (
    "id" BIGSERIAL NOT NULL,
    "tenantId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "fromTxid" BIGINT NOT NULL,
    "toTxid" BIGINT NOT NULL,
    "rowIds" BIGINT[],
    "rowHashes" TEXT[],
    "prevHash" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DecisionSeal_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "DecisionSeal_range_check" CHECK ("fromTxid" < "toTxid" AND "seq" > 0)
);

-- CreateIndex
CREATE UNIQUE INDEX "DecisionSeal_tenantId_seq_key" ON "DecisionSeal"("tenantId", "seq");

-- Seals are evidence too: append-only, like the log they seal.
CREATE TRIGGER "DecisionSeal_append_only"
    BEFORE UPDATE OR DELETE ON "DecisionSeal"
    FOR EACH ROW EXECUTE FUNCTION "decision_log_append_only"();

CREATE TRIGGER "DecisionSeal_no_truncate"
    BEFORE TRUNCATE ON "DecisionSeal"
    FOR EACH STATEMENT EXECUTE FUNCTION "decision_log_append_only"();
