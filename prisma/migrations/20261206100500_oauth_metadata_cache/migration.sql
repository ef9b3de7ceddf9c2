-- A client's metadata document is kept as long as its HTTP cache headers say (within 60 s and 24 h; an hour when
-- they say nothing), so each copy carries its own end. Copies cached before this migration are fetched again.

-- AlterTable
ALTER TABLE "OAuthClient" ADD COLUMN "cacheUntil" TIMESTAMPTZ(3);
