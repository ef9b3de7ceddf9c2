-- How a client authenticates at the token endpoint (issue 34): `none` (a public client with PKCE), `private_key_jwt`
-- (a metadata document naming it and its `jwks_uri`, as ChatGPT's does; RFC 7523 assertions), or
-- `client_secret_post` (a self-registered client given a secret, stored as its SHA-256 hash, as Claude registers).
-- OAuthClientAssertion: each accepted assertion's `jti` until its expiry, so a replay fails on every instance.

-- AlterTable
ALTER TABLE "OAuthClient" ADD COLUMN "authMethod" TEXT NOT NULL DEFAULT 'none',
ADD COLUMN "jwksUri" TEXT,
ADD COLUMN "secretHash" TEXT,
ADD CONSTRAINT "OAuthClient_authMethod_check" CHECK ("authMethod" IN ('none', 'private_key_jwt', 'client_secret_post'));

-- CreateTable
CREATE TABLE "OAuthClientAssertion" (
    "clientId" TEXT NOT NULL,
    "jti" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "OAuthClientAssertion_pkey" PRIMARY KEY ("clientId","jti")
);

-- CreateIndex
CREATE INDEX "OAuthClientAssertion_expiresAt_idx" ON "OAuthClientAssertion"("expiresAt");
