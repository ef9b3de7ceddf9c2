-- The audit trail against an insider with the database (lib/audit/seal.ts, docs/decisions/016): seals are keyed
-- (HMAC under a key the database never holds) and record which key and how many rows their chain holds; the
-- audit log of people's actions is sealed like the decision log; both logs refuse TRUNCATE as well as UPDATE and
-- DELETE, and an inserted row always carries the time and transaction of its insert.

-- AlterTable (existing rows get the migration's own transaction id and go into the audit log's first seals)
ALTER TABLE "AuditLog" ADD COLUMN "txid" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint;

-- CreateIndex
CREATE INDEX "AuditLog_txid_idx" ON "AuditLog"("txid");

CREATE TRIGGER "AuditLog_no_truncate"
    BEFORE TRUNCATE ON "AuditLog"
    FOR EACH STATEMENT EXECUTE FUNCTION "decision_log_append_only"();

-- AlterTable (seals made before this migration are unkeyed: "keyId" and "position" stay NULL)
ALTER TABLE "DecisionSeal" ADD COLUMN "log" TEXT NOT NULL DEFAULT 'decision',
    ADD COLUMN "keyId" TEXT,
    ADD COLUMN "position" BIGINT,
    ADD CONSTRAINT "DecisionSeal_log_check" CHECK ("log" IN ('decision', 'audit'));

-- One chain per log and tenant.
DROP INDEX "DecisionSeal_tenantId_seq_key";
CREATE UNIQUE INDEX "DecisionSeal_log_tenantId_seq_key" ON "DecisionSeal"("log", "tenantId", "seq");

-- The inserter does not choose where a row goes in the chain or when it says it happened: a row written with an
-- old "createdAt" or a sealed range's "txid" gets the time and transaction of its insert instead.
CREATE FUNCTION "audit_row_as_appended"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW."createdAt" := now();
    NEW."txid" := pg_current_xact_id()::text::bigint;
    RETURN NEW;
END;
$$;

CREATE TRIGGER "DecisionLog_as_appended"
    BEFORE INSERT ON "DecisionLog"
    FOR EACH ROW EXECUTE FUNCTION "audit_row_as_appended"();

CREATE TRIGGER "AuditLog_as_appended"
    BEFORE INSERT ON "AuditLog"
    FOR EACH ROW EXECUTE FUNCTION "audit_row_as_appended"();
