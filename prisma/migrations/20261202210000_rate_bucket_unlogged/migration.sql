-- Rate buckets are counters of the current minute that every call writes before its own record. As an unlogged
-- table they write no WAL, so that statement's commit does not wait for a disk flush; a crash or a failover
-- empties the table, which starts every conversation and key on a fresh window (docs/decisions/005).

-- AlterTable
ALTER TABLE "RateBucket" SET UNLOGGED;
