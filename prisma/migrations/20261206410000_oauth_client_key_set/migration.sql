-- A private_key_jwt client's key set, as last fetched from its `jwks_uri`, kept as long as its cache headers say
-- (within the metadata document's bounds): the token endpoint verifies assertions with it and fetches the set
-- again only when it is stale or an assertion names a key it does not hold (a rotation), never on every request.

-- AlterTable
ALTER TABLE "OAuthClient" ADD COLUMN "jwks" JSONB,
ADD COLUMN "jwksCacheUntil" TIMESTAMPTZ(3);
