-- A connection a person controls (issue 34). A connection's refresh token works only while it was used within the
-- tenant's idle lifetime and the connection is younger than its absolute lifetime; and a change to the person ends
-- their connections, whatever path made it, as it ends their sessions: a password change, deactivation or a new
-- role ends them all, the loss of the refund permission ends those that may propose refunds. Each ended grant's
-- key row is revoked with it, so its access tokens stop at their next call on every instance.

-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN "oauthRefreshIdleDays" INTEGER NOT NULL DEFAULT 30,
    ADD COLUMN "oauthRefreshMaxDays" INTEGER NOT NULL DEFAULT 90,
    ADD CONSTRAINT "Tenant_oauthRefreshDays_check"
        CHECK ("oauthRefreshIdleDays" BETWEEN 1 AND 365 AND "oauthRefreshMaxDays" BETWEEN 1 AND 3650);

CREATE FUNCTION "user_change_ends_connections"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    reason TEXT := CASE
        WHEN NEW."active" IS DISTINCT FROM OLD."active" THEN 'deactivated'
        WHEN NEW."role" IS DISTINCT FROM OLD."role" THEN 'role-changed'
        WHEN NEW."passwordChangedAt" IS DISTINCT FROM OLD."passwordChangedAt" THEN 'password-changed'
        ELSE 'refunds-withdrawn' END;
BEGIN
    WITH ended AS (
        UPDATE "OAuthGrant" SET "revokedAt" = CURRENT_TIMESTAMP, "revokedReason" = reason
        WHERE "agentId" = NEW."id" AND "revokedAt" IS NULL
          AND (reason <> 'refunds-withdrawn' OR 'refunds:write' = ANY ("scopes"))
        RETURNING "apiKeyId")
    UPDATE "ApiKey" SET "revokedAt" = CURRENT_TIMESTAMP
    WHERE "id" IN (SELECT "apiKeyId" FROM ended) AND "revokedAt" IS NULL;
    RETURN NEW;
END $$;

CREATE TRIGGER "User_change_ends_connections"
    AFTER UPDATE OF "active", "role", "passwordChangedAt", "canRefund" ON "User"
    FOR EACH ROW
    WHEN (NEW."active" IS DISTINCT FROM OLD."active" OR NEW."role" IS DISTINCT FROM OLD."role"
          OR NEW."passwordChangedAt" IS DISTINCT FROM OLD."passwordChangedAt"
          OR (OLD."canRefund" AND NOT NEW."canRefund"))
    EXECUTE FUNCTION "user_change_ends_connections"();
